"""Action classification: ordered, named rules over the normalised text and its time slots."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from intent import boundary, digest
from intent.lexicon import NO_REMINDER, RECORD_WORD, REMIND_WORD, WEATHER, is_activity
from intent.slots import Slots
from intent.title import title_of

_AGENDA = (r"(?:待办|安排|行程|日程|计划|早报|日报|摘要|清单|事项|提醒|推送|todo|"
           r"(?:要|该|需要)?(?:做|办)的事(?:情|儿)?|(?:当天|今天|明天|第二天|每天)的?事(?:情|儿)?|"
           r"(?:要|该|需要)(?:做|办)的(?=发|推|给))")
_STOP_VERB = r"(?:取消|退订|关闭|关掉|停止|停掉|暂停|不要再?|不用再?|别再?)"
_EVERY = r"(?:每日|每天|每早|每晚|每周|每个工作日|工作日)"
UNSUBSCRIBE = re.compile(
    rf"{_STOP_VERB}(?:给我)?(?:发|推|发送)?(?:{_EVERY}的?{_AGENDA}|(?:{_EVERY})?的?(?:待办|早报|日报|推送|摘要|行程|日程)?"
    r"(?:推送|早报|日报|摘要))|"
    rf"(?:早报|日报|推送|{_EVERY}的?(?:待办|安排|推送))(?:就|先|也)?(?:不用|不要|别|停|取消|关)"
)
_STATEMENT = re.compile(
    r"真(?:好|快|棒|美|累|烦|热|冷|舒服)|好(?:累|无聊|烦|困|饿|开心|难受|热|冷)|太.{0,3}了$|还没|才(?:下班|到|起|醒|回)|"
    r"过得|感觉|觉得|心情"
)
_PAGE_ASK = re.compile(r"用页面|页面展示|网页|行程页|好看一?点|好看些|做成页面|生成.{0,4}页|发个?链接")
_STOP = re.compile(r"不用|不要|别|取消|停止|停掉|关闭|关掉|退订|暂停")
_SUB_RECUR = re.compile(r"每天|每日|每早|每晚|每个?工作日|工作日|每周|每星期|每礼拜|每个?月|周一到周五")
_SUB_SEND = re.compile(
    rf"(?:发|推|告诉|汇总|整理|列)[^,]{{0,10}}{_AGENDA}|{_AGENDA}[^,]{{0,8}}(?:发|推)"
)
SNOOZE = re.compile(
    r"再(?:提醒|叫|喊|通知|催)|(?:晚点|晚些|稍后|过会儿?|待会儿?|等会儿?|一会儿?|等下|等一下|回头)(?:再)?(?:提醒|叫|喊)"
)
_QUERY_LOOK = re.compile(
    r"看看|看下|看一下|瞧瞧|查查|查一下|查看|查询|列出|列一下|显示|给我看|发我看|打开|展示|汇总|发给我|发我|告诉我|列给我"
)
_QUERY_NOUN = re.compile(r"行程|安排|日程|待办|计划|事情|事儿|任务|会议|会|提醒|清单")
_QUERY_ASK = re.compile(
    r"(?:有什么|有啥|有哪些|还有什么|还有啥|有几个|有没有|哪些|什么)(?:事|会|安排|行程|日程|待办|任务|计划|活动|提醒|约)"
    r"|(?:几点|什么时候)(?:开会|有会|的会|的航班|出发|面试)|有空吗|有空没|有(?:安排|事|会|约|课)没|空不空|闲不闲|有(?:会|事|课|约|安排|活动)吗|有没有(?:空|事|会|安排)|有空不|忙不忙|忙吗|空闲|闲吗|有安排吗|我的(?:行程|日程|安排|待办)|行程页|做成网页|(?:行程|日程|安排|待办)(?:表|列表|清单)"
    r"|^(?:今天|明天|后天|这周|本周|下周|这个月|下个月|周末)?的?(?:行程|安排|日程|待办)(?:计划|清单|列表)?\??$"
    r"|^(?:接下来|未来|最近|近|这)(?:[0-9一二两三四五六七八九十]+|几)(?:天|周|个?星期)(?:的|有)?(?:什么)?"
    r"(?:安排|行程|日程|事)?[?？]*$"  # 接下来一周 / 这几天
    r"|(?:第一个|下一个|最早的?一?个?|最后一个)(?:安排|会|事|日程|待办|行程)(?=是|在|几点|什么时候|[?？]|$)"
    r"|(?:安排|日程|行程)是(?:什么|啥)|(?:哪些|什么|啥)(?:还)?(?:没|未)(?:完成|做|办|搞定)"
    r"|空着(?:吗|呢|没|不|么|嘛)|(?:都|还)?安排(?:了|的)?(?:啥|什么|哪些)|(?:都|还)?有(?:啥|什么|哪些)(?:安排|事|活动)?(?:要做|要办|要忙|要干)?(?:的|呢|吗|么|嘛)*[?？]*$"
    r"|(?:还有|有)别的(?:事|安排|活动|会)(?:情|儿)?(?:不|吗|没|没有|么|嘛)?"
    # 明天要做什么 / 有几个会 / 完成了几个 / 剩下的安排
    r"|有(?:什么|啥|哪些)(?:事情?|东西)?要(?:做|办|干|忙|交|准备|带|拿)|要(?:做|干|办|忙)(?:些)?(?:什么|啥|嘛|哪些事)"
    r"|(?:有|开|要开)几(?:个|场)(?:会|会议)|(?:完成|做完|办完)了?几(?:个|件|项)|剩(?:下|余)的(?:安排|日程|事|待办|任务)"
    r"|还有几(?:件|个|项)(?:事|安排|待办|任务|会)?|剩(?:下)?(?:几|多少|哪些)(?:个|件|项)?(?:任务|待办|事)"
    r"|(?:待办|任务|事情?)(?:还)?(?:没|没有)(?:做完|完成|办完|搞定)"
    r"|^还有(?:别的|其他的?|其它的?)(?:吗|么|嘛|没|没有|不|呢)?[?？]*$"
)
# What is left of 这周末干啥 / 明天忙啥 once the time is out: a question about that time.
# 我后天是不是有个面试: a yes-or-no about what a day holds (是不是要下雨了, with no day, and 是不是要调休上班, about
# the calendar, are the agent's).
_YES_NO = re.compile(r"是不是(?:有|要)(?:个|一个)?(?=[\u4e00-\u9fff])"
                     r"(?!调休|上班|放假|休息|补班|下雨|下雪|降温|升温|刮风|停电|停水)")
_WHAT_DOING = re.compile(r"^(?:我|都|要|在|得)*(?:干|做|忙)(?:些)?(?:啥|什么|嘛)(?:呢|呀|啊|哇)?[?？]*$")
_QUESTION = re.compile(
    r"[吗嘛么呢]\??$|\?$|怎么|为什么|为啥|如何|是不是|是否|多少|哪|能不能|可不可以|要不要|什么意思|几点|几号|几月|"
    r"什么时候|星期几|周几|啥|建议|推荐|攻略|好不好"
)
_REQUEST = re.compile(r"帮我|请|麻烦|提醒我|记一下|给我|叫我|记得")
# Completion: a verb with a result complement and 了 (交上去了, 买到了, 付过了, 搞掂了), 已(经) + verb, a tick.
_DONE_VERB = (r"(?:交|提交|买|取|拿|领|办|做|弄|写|干|付|还|缴|续|签|修|洗|寄|发|送|递|打|填|报|搞|处理|整理|读|背|吃|"
              r"带|订|预订|预约|回(?!到)|换|充|退|改|装|收拾|放)")
COMPLETE = re.compile(
    r"(?:搞定|完成|结束|交掉|搞掂|ok|OK|Ok|弄妥|办妥)(?:了|啦|咯|喽|哈+)|"
    rf"{_DONE_VERB}(?:完|好|掉|妥|到|过|上去|出去|过去|回来)(?:了|啦|咯|喽)|"
    r"已经?(?:完成|搞定|提交|交|做|办|买|取|付|还|打|发|寄|缴|续|签|处理)(?:完|好|掉|过|上去|出去|回来|到)?(?:了|啦)?|"
    r"打勾|勾掉|标记(?:为)?完成|"
    r"(?:完成|搞定|做完|办完|弄完)(?:啦|咯|喽)?$|[✅✔☑]|"
    r"(?<=[\u4e00-\u9fff]{2})(?P<bare>交|付|缴|还|寄|买|取|办|签|续|报)(?:了|啦)$"  # 水费交了 (not 要把…交了)
)
# Cancellation: the words, or 不(再) + verb (+ object) + 了 at the end (羽毛球不打了, 明天不去健身了).
CANCEL = re.compile(
    r"取消|不开了|不去了|不办了|删了|删掉|删除|去掉|撤销|作废|不用去了|不要了|黄了|不见了|不约了|不吃了|免了|推掉|算了$|"
    r"(?:去|来|参加|赶|到)不了了?|赶不上了|"
    r"不(?:再|想|用)?(?:打|去|开|办|吃|约|见|看|做|买|上|搞|弄|玩|来|聚|跑|游|练|学|参加|出发|过|考|交)"
    r"(?P<obj1>[^,!?了啦]{0,6})(?:了|啦|咯)(?:吧|哈|啊)?$|"
    r"(?:不用|不要|别)再?提醒(?:我)?(?P<obj2>[^,!?]{1,12})了(?:吧|哈|啊)?$|"
    r"(?<=[\u4e00-\u9fff]{2})(?<!好的|觉得|暂时|现在|那就|谢谢|已经|目前|应该|可能)"  # 好的不用了: small talk
    r"(?:那个|这个|那件事|的)?(?:不用了|不需要了|不做了|不弄了)(?:吧|哈|啊)?$"  # 取快递那个不用了
)
UPDATE = re.compile(
    r"改到|改成|改为|改在|换到|换成|调到|调整到|调整为|挪到|移到|推迟|延后|延期|推到|提前到|往后推|往后挪|往后延|推后|往前挪|往前推|顺延|改一下|改下|改个时间|"
    r"改(?=[今明后大]天|周|星期|下周|[0-9一二两三四五六七八九十]+(?:点|号|:))|"
    r"改时间|重新安排|改名|重命名"
)


_BY = re.compile(r"\s*(?:之前|以前|前|为止|截止)(?!的)")


def _by_a_date(text: str, slots: Slots, verb_at: int) -> bool:
    """A date (not a past one) followed by 之前/前 before the verb: the sentence sets a deadline."""
    when = slots.when
    return (when is not None and when.has_date and when.span[1] <= verb_at
            and _BY.match(text, when.span[1]) is not None)


_INTENDED = re.compile(r"要|得|把|记得|需要|别忘|之前|以前|前|明天|后天|下周|提醒")
IMPERATIVE = re.compile(r"提醒我|叫我|喊我|记一下|帮我记|记下|记得")


@dataclass(frozen=True, slots=True)
class Decision:
    action: str
    rule: str


def classify(text: str, slots: Slots, today: date | None = None) -> Decision:
    """The first matching rule wins; the order encodes precedence (unsubscribe before cancel …)."""
    if not text.strip():
        return Decision("none", "none.empty")
    if digest.changes_push(text, slots):  # digest changes in words: 推送改到8点 / 周末就别发了 / 换到晚上九点发第二天的
        return Decision("subscribe_digest", "digest.retime")
    if UNSUBSCRIBE.search(text):
        return Decision("unsubscribe_digest", "digest.unsubscribe")
    daily_clock = slots.when is not None and slots.when.has_clock and not slots.when.has_date
    send = _SUB_SEND.search(text)
    actor = IMPERATIVE.search(text)  # 每天5点提醒我发日报: the user sends; the bot pushes nothing
    if send and not (actor and actor.start() <= send.start()) and (
            _SUB_RECUR.search(text) or slots.recur is not None or daily_clock):
        if _STOP.search(digest.without_days_off(text)):  # 每天7点发待办，周末不用发: only the weekend is off
            return Decision("unsubscribe_digest", "digest.unsubscribe_negated")  # 不用每天给我发待办了
        return Decision("subscribe_digest", "digest.subscribe")
    remind = REMIND_WORD.search(text)
    if boundary.asks_the_world(text) and not remind:
        return Decision("none", "none.world_lookup")
    if boundary.asks_about_bot(text, slots):
        return Decision("none", "none.about_bot")
    looked_only = IMPERATIVE.search(text) and not _QUERY_ASK.search(text) and not _PAGE_ASK.search(text)
    if (_is_query(text, slots) or boundary.asks_own_item(text, slots)) and not looked_only:  # 看下这个，提醒我
        return Decision("query", "query.ask")
    if WEATHER.search(text) and not remind:
        return Decision("none", "none.weather")
    if _QUESTION.search(text) and not _REQUEST.search(text):
        return Decision("none", "none.question")
    create_first = IMPERATIVE.search(text)
    for pattern, action in ((COMPLETE, "complete"), (CANCEL, "cancel"), (UPDATE, "update")):
        m = pattern.search(text)
        waived = NO_REMINDER.search(text)
        if m and action == "cancel" and waived and waived.start() <= m.start() and m.end() <= waived.end() \
                and (slots.when is not None or slots.recur is not None):
            continue  # 明天三点开会，提醒就免了: a new item without reminder (续费提醒不要了 still cancels)
        if m and action == "complete" and m.groupdict().get("bare") and _INTENDED.search(text):
            continue  # 月底前要把报销单交了: an intention, not a report
        if m and action == "complete" and _by_a_date(text, slots, m.start()):
            continue  # 周三之前把PPT做完: a deadline to meet, not one met
        if m and not (create_first and create_first.start() < m.start()):
            if action == "update" and "提醒" in text and not _has_title_words(text[:m.start()], slots, m.start()):
                return Decision("snooze", "snooze.shift")  # 推迟10分钟提醒: about the reminder just delivered
            return Decision(action, f"{action}.verb")
    if slots.lead_minutes is not None and not re.search(r"提醒|叫我|喊我|通知我", text) and slots.when is None \
            and slots.recur is None:
        return Decision("update", "update.shift_earlier")  # 会议提前两小时: moves an existing item
    if SNOOZE.search(text) and not _has_title_words(text, slots):
        return Decision("snooze", "snooze.again")
    if _lead_for_existing(text, slots):
        return Decision("update", "update.lead_existing")
    if NO_REMINDER.search(text) or remind or RECORD_WORD.search(text):
        return Decision("create", "create.trigger")
    if _STATEMENT.search(text) or (slots.when is not None and text.startswith("了", slots.when.span[1])):
        return Decision("none", "none.statement")  # 下午三点的阳光真好 / 8点了还没吃: talk, not a request
    if slots.recur is None and slots.relative is None and not title_of(text, slots.spans):
        return Decision("none", "none.no_activity")  # 三点了 / 现在: time words alone are no request
    if today is not None and slots.recur is None and slots.when is not None and slots.when.start is not None \
            and slots.when.start.date() < today:
        return Decision("none", "none.past")  # 昨天下午三点我去开会了: a report, not a request
    if slots.recur is not None or slots.relative is not None:
        return Decision("create", "create.time")
    if slots.when is not None and (slots.when.has_clock or is_activity(text) or _has_deadline(text)):
        return Decision("create", "create.time")
    if slots.when is not None and (re.search(r"要|得|需要|去|约", text) or _starts_with_task_verb(text, slots)):
        return Decision("create", "create.weak")
    if is_activity(text) and _ARRANGED.search(text):
        return Decision("create", "create.activity")
    return Decision("none", "none.default")


# 有个会 / 帮我约个饭: an activity being arranged (帮我写一段生日祝福 is a request for the agent, not an activity).
_ARRANGED = re.compile(r"有个|开个|约个|定个|订个|要去|安排|预约|帮我(?=约|订|定|安排|预约|预定|登记|报名)")
_AGENDA_ONLY = re.compile(
    r"^[,.!? ]*(?:我的|的)?(?:所有)?(?:行程|安排|日程|待办|计划|会议|会|提醒|任务|事情?)"
    r"(?:计划|清单|列表|安排)?[?!. ]*$"
)


def _lead_for_existing(text: str, slots: Slots) -> bool:
    """明天的会提前一小时提醒我: 的 after a date names an item already there; only the lead is new."""
    when = slots.when
    if slots.lead_minutes is None or slots.recur is not None or slots.relative is not None:
        return False
    if when is None:  # 给爸爸打电话提前半小时提醒: no time of its own, so the item is one already there
        return "提醒" in text and not re.search(r"有个|有一个|要|新|记", text) \
            and not re.match(r"[,.!? ]*(?:提醒|叫|喊|通知)", text)  # 提醒我提前一小时出发: a clause of a request
    if when.has_clock:
        return False
    return text[when.span[1]:].startswith("的") and not re.search(r"有个|有一个|要|新", text)


def _is_query(text: str, slots: Slots) -> bool:
    if _QUERY_ASK.search(text) or _PAGE_ASK.search(text):
        return True
    rest = text
    for b, e in sorted(slots.spans, reverse=True):
        rest = rest[:b] + rest[e:]
    if (slots.when is not None or slots.recur is not None) and _AGENDA_ONLY.match(rest):
        return True
    if slots.when is not None and (_WHAT_DOING.match(rest.strip(" ,.!?")) or _YES_NO.search(text)):
        return True
    looked = _QUERY_LOOK.search(rest)
    if slots.when is not None and looked and not re.sub(r"[我的吧呢啊,.!?~ ]", "", _QUERY_LOOK.sub("", rest)):
        return True  # 看看这周 / 查一下明天: a look at a time and nothing else
    return bool(_QUERY_LOOK.search(text) and _QUERY_NOUN.search(text))


_TASK_VERB = re.compile(
    r"^[,. ]*(?:我|先)?(?:要|得)?(?:把[^,]{1,10}?)?"
    r"(?:交|买|取|办|还|付|寄|送|拿|写|做|修|洗|订|缴|续|签|带|领|参加|准备|打扫|整理|提交|休|开工|复工|回老家|报销|"
    r"过一?下|过一遍|对一?下|考(?!虑)|"
    r"陪[^,]{2}|"  # 陪孩子写作业 / 陪爸爸钓鱼: keeping someone company at something
    r"给[^,]{1,8}?(?:打电话|打个电话|回电话|回个电话|发消息|发微信|拜年|过生日))"
)


def _starts_with_task_verb(text: str, slots: Slots) -> bool:
    """周五交报告: a date followed by a task verb is a to-do even without 提醒/记一下."""
    end = max(e for _, e in slots.spans) if slots.spans else 0
    return bool(_TASK_VERB.match(text[end:]))


def _has_deadline(text: str) -> bool:
    from intent.lexicon import DEADLINE

    return bool(DEADLINE.search(text))


_SNOOZE_FILLER = re.compile(
    r"再|提醒|叫|喊|通知|催|我|一下|一次|一遍|吧|了|好|请|晚点|晚些|稍后|过|会儿?|待会儿?|等会儿?|一会儿?|等下|等一下|"
    r"回头|先|知道|收到|行|嗯|哦|噢|哈|啊|呀|嘛|呗|啦|喔|[,.!? ~]|[\U0001F300-\U0001FAFF\u2600-\u27BF]"
)


def _has_title_words(text: str, slots: Slots, limit: int | None = None) -> bool:
    rest = text
    for b, e in sorted(slots.spans, reverse=True):
        if limit is not None and e > limit:
            continue
        rest = rest[:b] + rest[e:]
    return bool(_SNOOZE_FILLER.sub("", rest))
