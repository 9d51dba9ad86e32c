"""WeChat protocol edge: signatures, AES crypto, XML, inbound messages, error classes, API client."""
