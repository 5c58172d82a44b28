"""The council's own sentences in the question's language.

The record keeps magi's reasons and notes in English, one stable form that tests, tools and
``--json`` read. The matrix a person reads follows the question's language (seed 001: a
Japanese question gets a Japanese matrix), so each sentence code writes has its Japanese
form here, found by the English pattern; a sentence with no entry (a newer reason) is shown
as it is. Reasons joined with "; " are translated part by part. Only magi's own sentences
are passed here, before a seat's or the clerk's words join them: those are never
translated, even when they read like one of magi's phrases.
"""

from __future__ import annotations

import re

__all__ = ["localize"]

# (English pattern, Japanese, the groups that are magi's own words and are translated in
# turn). Every other group is kept as written: it may be a seat's words ("unanimity" as a
# finding's claim must not become 全会一致).
_JA: tuple[tuple[re.Pattern[str], str, tuple[int, ...]], ...] = tuple(
    (re.compile(f"^{entry[0]}$"), entry[1], tuple(entry[2]) if len(entry) > 2 else ())
    for entry in (
        (r"(\S+) \((.+)\) cannot sit: (.+)", "{0}（{1}）は着席できません: {2}", (2,)),
        (r"`(.+)` is not on PATH", "`{0}` が PATH にありません"),
        (
            r"two-seat council: 2-0 passes; a split gets one debate round",
            "二席の合議: 2対0で可決、割れた場合の討論は1ラウンド",
        ),
        (
            r"the panel has (\d+) seat\(s\); a council needs at least two",
            "パネルは{0}席です。合議には2席以上が必要です",
        ),
        (r"only (\d+) of (\d+) seats can sit \((.*)\)", "{1}席中{0}席しか着席できません（{2}）"),
        (
            r"(\d+) seat\(s\) answered; a council needs two answers to count",
            "回答は{0}席のみ。数えるには2席以上の回答が必要です",
        ),
        (r"no position reached (.+) of the weight", "重み {0} に達した立場はありません"),
        (r"two positions tie at (\d+) of (\d+)", "2つの立場が重み {1} 中 {0} で並びました"),
        (
            r"passed with (\d+) of (\d+) weight \(needs (.+)\)",
            "重み {1} 中 {0} で可決（必要: {2}）",
        ),
        (
            r"the heaviest position has (\d+) supporter\(s\); the panel asks for (\d+) "
            r"\(min_supporters\)",
            "最も重い立場の支持は{0}席、パネルは{1}席を求めます（min_supporters）",
        ),
        (
            r"(\d+) seat\(s\) answered; nothing to count",
            "回答は{0}席のみで、数えるものがありません",
        ),
        (r"(\d+) seat\(s\) answered debate (\d+)", "討論第{1}ラウンドに回答したのは{0}席のみ"),
        (r"after (\d+) debate round\(s\)", "討論{0}ラウンドの後"),
        (r"no debate allowed", "討論は許されていません"),
        (
            r"(\d+) seat\(s\) answered; nothing to cross-check",
            "回答は{0}席のみで、照合するものがありません",
        ),
        (
            r"(\d+) adopted, (\d+) conditionally adopted, (\d+) rejected of (\d+) findings "
            r"from (\d+) seats",
            "{4}席からの知見{3}件: 採用{0}、条件付き採用{1}、不採用{2}",
        ),
        (r"adopted on the conditions noted", "下記の条件付きで採用"),
        (
            r"the council split: agree and reject, both sides quoted",
            "評議が割れました（賛成と反対）。双方を下記に引用します",
        ),
        (
            r"the conditions and the rejection stand side by side",
            "条件と反対意見を併記します",
        ),
        (
            r"no judge answered; the finding stands unverified",
            "判定した席がなく、この知見は未検証です",
        ),
        (r"(C\d+) adopted \((\d+) supporter\(s\)\)", "{0} 採用（支持{1}席）"),
        (r"(C\d+) conditional \((\d+) supporter\(s\)\)", "{0} 条件付き採用（支持{1}席）"),
        (r"(C\d+) rejected \((\d+) supporter\(s\)\)", "{0} 不採用（支持{1}席）"),
        (r"(C\d+) unverified \((\d+) supporter\(s\)\)", "{0} 未検証（支持{1}席）"),
        (r"veto ignored: (.*)", "無視された拒否権: {0}"),
        # Review (core.council_review): the verdict, its figures, the tier's rule.
        (
            r"(passed|rejected|conditional) (\d+):(\d+)(?:, (\d+) with conditions)? "
            r"\(weight (\d+):(\d+)\) at (low|medium|high|critical) risk \((.+)\)",
            "{0} 承認{1}:却下{2}（条件付き{3}）重み {4}:{5}、リスク {6}（{7}）",
            (0, 7),  # the verdict and the rule are magi's words too: translated in turn
        ),
        (r"approve weight above reject weight", "承認の重みが却下の重みを上回ること"),
        (r"unanimity", "全会一致"),
        (r"unanimity plus the veto holder's approval", "全会一致かつ拒否権を持つ席の承認"),
        (r"vetoed by (.+) for a critical finding", "{0} が重大な指摘により拒否権を行使"),
        (
            r"no quorum: (\d+) readable vote\(s\) of (\d+) seat\(s\); (\w+) risk needs (\d+) "
            r"\(abstentions and lost or unreadable answers do not count\)",
            "定足数に達しません: {1}席中、読める票は{0}票。{2}リスクには{3}票が必要です"
            "（棄権、失われた回答、読めない回答は数えません）",
        ),
        (
            r"it passes once its (\d+) condition\(s\) are met and a new review says so",
            "{0}件の条件が満たされ、新しいレビューがそう判断すれば通ります",
        ),
        (r"the veto holder (.+) did not approve", "拒否権を持つ {0} が承認していません"),
        (r"passed", "可決"),
        (r"rejected", "否決"),
        (r"conditional", "条件付き承認"),
    )
)


def _one(text: str) -> str:
    for pattern, ja, ours in _JA:
        m = pattern.match(text)
        if m is not None:
            groups = [g or "0" for g in m.groups()]
            return ja.format(*(_one(g) if i in ours else g for i, g in enumerate(groups)))
    return text


def localize(language: str, text: str) -> str:
    """``text`` (magi's English) in ``language``; unknown sentences are kept as written."""
    if language != "ja" or not text:
        return text
    whole = _one(text)
    if whole != text:
        return whole
    return "; ".join(_one(part) for part in text.split("; "))
