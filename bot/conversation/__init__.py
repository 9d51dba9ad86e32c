"""The conversation: a user message through the rule preflight, the schedule service and the reply."""

from bot.conversation.handler import ConversationHandler

__all__ = ["ConversationHandler"]
