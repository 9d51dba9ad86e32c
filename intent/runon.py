"""A list said with no separator at all (要做的：换灯泡取快递剪头发 / 要买的：牛奶鸡蛋面包): its entries.

The run is cut into words with jieba's dictionary (the segmenter `intent.target` loads; its dictionary is never
changed), with the verbs of errands weighed as words of their own, so 取快递交电费 is 取/快递/交/电费 and not
取/快/递交/电费. Then each verb starts an entry once the entry before it has its thing (预约洗牙 stays one,
给房东发消息 too: 给 waits for its verb), and things said with no verb are an entry each (牛奶 / 鸡蛋 / 面包).
A cut that leaves an entry of one character is not trusted: the run stays whole.
"""

from __future__ import annotations

from math import log

from intent import target

# Verbs of errands said as a word of their own, each waiting for its thing (换 灯泡, 预约 体检).
_VERBS = frozenset({
    "换", "取", "剪", "交", "缴", "还", "寄", "买", "回", "订", "定", "修", "洗", "拖", "倒", "约", "填", "改", "打",
    "追", "点", "拿", "签", "退", "转", "卖", "办", "写", "续", "报", "发", "付", "充", "擦", "扫", "搬", "收", "送",
    "接", "做", "学", "练", "背", "读", "煮", "晒", "晾", "熨", "缝", "刷", "铺", "扔", "丢", "捐", "叠", "补", "贴",
    "装", "拆", "领", "借", "存", "查", "问", "催", "挂", "染", "烫", "遛", "喂", "浇", "烤", "整", "理", "清",
    "预约", "整理", "续签", "续费", "报名", "联系", "打包", "清洁", "打扫", "报销", "回复", "准备", "签收", "办理",
    "预定", "预订", "购买", "提交", "缴纳", "处理", "完成", "打印", "复印", "充值", "申请", "确认", "参加", "更新",
    "检查", "清理", "收拾", "修理", "保养", "预习", "复习", "归还", "退还", "领取", "提取", "邮寄", "下单", "取消",
    "核对", "填写", "上交", "上传", "下载", "安装", "卸载", "注册", "登记", "兑换", "清洗", "洗刷", "维修",
})
# Things whose first character is an errand verb (报告 is no 报 + 告): never a verb with its thing.
_NOUNS = frozenset({
    "报告", "报表", "报价", "报纸", "发票", "收据", "学费", "学校", "点心", "存款", "收入", "打印机", "写字楼",
    "读书会", "练习册", "洗衣机", "洗衣液", "洗衣粉", "洗发水", "洗洁精", "洗面奶", "充电器", "充电宝", "送货单",
    "领带", "回执", "借条", "接线板", "修正带",
})
# Words that start an entry and wait for its verb (给房东发消息 / 帮妈妈挂号 / 陪孩子打疫苗).
_LEADS = frozenset({"给", "跟", "和", "帮", "找", "陪", "带", "把", "去", "到"})
_FLOOR = 50_000  # the weight of an errand verb in the cut, as a common word's (jieba counts)
_LONE = 1_000  # at most this weight for a character standing alone that is no verb (快 of 取快递交电费)
_SHORTEST, _LONGEST = 4, 40  # characters of a run worth cutting


def entries(run: str, *, things: bool = False) -> list[str] | None:
    """The entries of a run said without separators, or None when it does not cut into two or more (things:
    three). `things`: the list names things (要买的 / 要带的), each word an entry; else errands, each from its
    verb."""
    if not _SHORTEST <= len(run) <= _LONGEST or not target.ensure_loaded():
        return None
    found: list[list[str]] = []
    needs: str | None = None  # what the entry so far waits for: its thing (换 …), its verb (给房东 …), nothing
    bare = False  # the entry so far is a thing said with no verb (牛奶 / 体检): the next thing is another entry
    for word in _glued(_cut(run)):
        kind = "thing" if things and kind_of(word) == "done" else kind_of(word)
        if not found or (needs is None and (bare or kind != "thing" or things)):
            found.append([word])
            needs = {"verb": "thing", "lead": "verb"}.get(kind)
            bare = kind == "thing"
            continue
        found[-1].append(word)
        if kind == "done" or (kind == "thing" and needs == "thing"):
            needs = None
        elif kind == "verb":
            needs = "thing"
    cut = ["".join(entry) for entry in found]
    if len(cut) < (3 if things else 2) or any(len(entry) < 2 for entry in cut):
        # two things said together are as often one thing (蓝牙耳机 / 儿童牙刷): only three or more are cut
        return None
    return cut


def kind_of(word: str) -> str:
    """verb (waits for a thing), done (a verb with its thing: 买菜 / 剪头发), lead (给 / 帮), or thing."""
    if word in _LEADS:
        return "lead"
    if word in _VERBS:
        return "verb"
    if len(word) >= 2 and word[0] in _VERBS and word not in _NOUNS and target.is_word(word[1:]):
        return "done"
    return "thing"


def _cut(run: str) -> list[str]:
    """jieba's dictionary cut (no guessing of unknown words), errand verbs weighed as common words and other
    lone characters as rare ones."""
    freq, total = target.dictionary()
    dag = target.word_graph(run)
    size = len(run)
    best: dict[int, tuple[float, int]] = {size: (0.0, 0)}
    logtotal = log(total)
    for i in range(size - 1, -1, -1):
        options = []
        for end in dag[i]:
            piece = run[i:end + 1]
            weight = freq.get(piece) or 1
            if piece in _VERBS:
                weight = max(weight, _FLOOR)
            elif len(piece) == 1:
                weight = min(weight, _LONE)  # a lone character that is no verb is rarely an entry's word
            options.append((log(weight) - logtotal + best[end + 1][0], end))
        best[i] = max(options)
    words, i = [], 0
    while i < size:
        end = best[i][1] + 1
        words.append(run[i:end])
        i = end
    return words


def _glued(words: list[str]) -> list[str]:
    """Single characters that are no verb, joined: a run of them is one word (猫砂), one alone belongs to the
    word before it (充电+宝, 洗衣+液, 还+书)."""
    out: list[str] = []
    loose = ""
    for word in [*words, ""]:
        if len(word) == 1 and word not in _VERBS and word not in _LEADS:
            loose += word
            continue
        if len(loose) == 1 and out:
            out[-1] += loose
        elif loose:
            out.append(loose)
        loose = ""
        if word:
            out.append(word)
    return out
