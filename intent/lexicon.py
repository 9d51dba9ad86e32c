"""Word classes the rules share: meetings, slot-occupying activities, deadlines, reminder words."""

from __future__ import annotations

import re

# Meeting class (docs/conversation.md#meetings): default reminder offset applies. 会 alone counts unless it is the verb
# 会 (会游泳, 会下雨) or part of a non-meeting word (聚会, 晚会, 宴会, 约会, 舞会, 学会 …).
_NOT_MEETING = re.compile(
    r"聚会|晚会|宴会|约会|舞会|学会|舞会|庙会|酒会|茶会|年会|联欢会|演唱会|音乐会|运动会|展会|博览会|"
    r"机会|社会|误会|体会|理会|领会|会员|会所|会计|会话|会儿|一会|都会|不会|就会|可能会|应该会|也会|还会|"
    r"会不会|会有|会下|会来|会去|会是|会在|会说|会做|会用|会开车|会游泳|我会|你会|他会|她会|会议纪要|会议记录"
)
_MEETING = re.compile(
    r"(?i:meeting|call with|con-?call|conference call|stand-?up|sync|1on1|1:1|one-on-one|interview|review|demo|workshop"
    r"|webinar)|面试|"
    r"评审会|电话会议|视频会议|项目会|例会|周会|晨会|组会|早会|夕会|月会|站会|开会|会议|有个会|开个会|"
    r"个会|的会|会$|会[,，.!]"
)
MEETING_WORD = re.compile(r"评审会|电话会议|视频会议|项目会|例会|周会|晨会|组会|早会|站会|会议|会")

ACTIVITY = re.compile(
    r"开会|会议|面试|吃饭|聚餐|饭局|晚饭|午饭|早饭|约饭|看电影|电影|体检|出差|(?<![整处清料梳管])理发|剪头|航班|飞机|高铁|火车|动车|"
    r"登机|约会|聚会|晚会|宴会|婚礼|上课|课程|培训|讲座|比赛|演出|演唱会|音乐会|考试|看病|看牙|牙医|复诊|门诊|"
    r"手术|旅行|旅游|纪念日|生日|派对|答辩|路演|拜访|见面|见客户|会面|约了|健身|瑜伽|游泳|打球|跑步|按摩|"
    r"接机|送机|签约|家长会|值班|面谈|约见|相亲|团建|年会|预约|医院|看医生|就诊|挂号|牙科|拍照|看房|搬家|"
    r"火锅|烧烤|自助餐|大餐|撸串|吃顿|K歌|唱歌|"
    r"(?:^|[午上晚早天号日点半])见(?![面过到识鬼])[\u4e00-\u9fff]{2}"  # 周五上午见供应商 / 三点见王总
)
ALL_DAY_ACTIVITY = re.compile(r"纪念日|生日|出差|旅行|旅游|放假|休假|假期|婚礼|团建")
DEADLINE = re.compile(
    r"(?:之前|以前|(?<![提往向目事面从以之年])前)(?:要|得|把|需要|必须|记得|,|完成|交|提交|寄|买|还|办|付|缴|续|签|订|取|写|报销|"
    r"准备|搞定|弄好|处理|发给|发到)|截止|截至|到期|要交|记得|deadline|ddl", re.IGNORECASE
)
# No reminder: a negation before a reminder verb (不用叫我, 这次别提醒), the reminder waived after it
# (提醒就免了, 提醒不用了), or "just note it" (记着就行).
NO_REMINDER_RX = (
    r"(?:不用|不要|别|无需|不需要|不必|甭|不)(?:再)?(?:设置?|加|给我|来)?(?:个)?(?:提醒|叫我|喊我|通知我|催我)(?:我)?"
    r"|(?:提醒|闹钟|叫我)(?:就|也|啥的)?(?:免了|不用了?|不要了?|算了|省了|没必要)"
    r"|(?:记着|记下|记一下|记上|记住|存着)就(?:行|好|可以)了?"
)
NO_REMINDER = re.compile(NO_REMINDER_RX)
REMIND_WORD = re.compile(r"提醒|叫我|喊我|叫醒|通知我|告诉我|闹钟|闹铃")
RECORD_WORD = re.compile(
    r"记一下|记下|记录|记上|帮我记|备忘|加个待办|加一个待办|添加待办|新建|记个|别忘了?|不要忘了?|别忘记|记得"
)
WEATHER = re.compile(r"下雨|下雪|天气|气温|温度|刮风|台风|雾霾|降温|升温")


def is_meeting(text: str) -> bool:
    """True for the meeting class, false for 聚会/晚会/… and the verb 会."""
    cleaned = _NOT_MEETING.sub("", text)
    return bool(_MEETING.search(cleaned))


def is_activity(text: str) -> bool:
    return bool(ACTIVITY.search(text)) or is_meeting(text)
