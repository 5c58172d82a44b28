"""The ``[council]`` table: named panels of 2 to 9 weighted seats, the clerk, personalities.

A panel is an array of seats, so (like every array) it lives in one config layer. With no
``[council]`` table the panel is the roster with equal weights and no personalities. The
shipped personalities can be edited or added to under ``[council.personalities]``; a run
copies the text it used into its record, so editing the catalogue later changes no run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "MIN_QUORUM",
    "PERSONALITIES",
    "PERSONALITIES_JA",
    "CouncilConfig",
    "CouncilSeatConfig",
    "PanelConfig",
    "ReviewQuorum",
]

MIN_QUORUM = 2  # seed 004: at least two votes that are not abstentions decide anything

PERSONALITIES: dict[str, str] = {
    "security": "You review as a security engineer: trust boundaries, injection, secrets, "
    "authentication and authorisation, supply chain, and what an attacker would try first.",
    "reliability": "You review for reliability and operations: failure modes, retries and "
    "timeouts, resource limits, observability, rollout and rollback, and what pages someone "
    "at 3 a.m.",
    "maintainability": "You review for maintainability: clear names and boundaries, small "
    "units, tests that pin behaviour, and what the next person to change this will trip on.",
    "accessibility": "You review for accessibility: keyboard and screen-reader use, contrast, "
    "language and plain wording, and people the design leaves out.",
    "product": "You review for product and UX: what the user is trying to do, whether this "
    "helps them do it, defaults, error messages, and the cost of the change to users.",
    "skeptic": "You are the skeptical reviewer: look for the assumption nobody checked, the "
    "evidence that is missing, and the simpler alternative that was not considered.",
}


# The same perspectives for a Japanese council (prompts follow the question's language).
PERSONALITIES_JA: dict[str, str] = {
    "security": "セキュリティ技術者として見てください: 信頼境界、インジェクション、秘密情報、"
    "認証と認可、サプライチェーン、そして攻撃者がまず試すこと。",
    "reliability": "信頼性と運用の観点で見てください: 障害の起こり方、再試行とタイムアウト、"
    "資源の上限、可観測性、展開と切り戻し、そして深夜に誰かが呼び出される原因。",
    "maintainability": "保守性の観点で見てください: 明確な名前と境界、小さな単位、振る舞いを"
    "固定するテスト、そして次にこれを変更する人がつまずく点。",
    "accessibility": "アクセシビリティの観点で見てください: キーボードとスクリーンリーダーでの"
    "操作、コントラスト、言葉遣いと平易さ、そして設計から取り残される人。",
    "product": "プロダクトと UX の観点で見てください: 利用者が何をしようとしているか、これが"
    "その助けになるか、既定値、エラーメッセージ、そして変更が利用者に与える負担。",
    "skeptic": "懐疑的なレビュアーとして見てください: 誰も確かめていない前提、欠けている根拠、"
    "検討されなかったより単純な代案を探してください。",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CouncilSeatConfig(_Strict):
    """One seat of a panel."""

    agent: str = Field(description="A roster agent id.")
    weight: int = Field(1, ge=1, le=100, description="How much this seat's support weighs.")
    personality: str | None = Field(None, description="A name in the personalities catalogue.")
    veto: bool = Field(False, description="Review mode: may veto for a critical finding.")


class PanelConfig(_Strict):
    """A named panel: its seats, the share of weight a position needs, the debate rounds."""

    threshold: float = Field(0.5, gt=0, le=1, description="Share of the total weight to pass.")
    rounds: int = Field(1, ge=0, le=2, description="Debate rounds at most (one with two seats).")
    min_supporters: int = Field(
        1,
        ge=1,
        le=9,
        description="Seats a passing position needs besides its weight (2: seed 001's rule, "
        "no single seat passes a position however heavy).",
    )
    seats: list[CouncilSeatConfig] = Field(min_length=2, max_length=9)

    @model_validator(mode="after")
    def _supporters_can_be_found(self) -> PanelConfig:
        if self.min_supporters > len(self.seats):
            raise ValueError(
                f"min_supporters is {self.min_supporters} but the panel has "
                f"{len(self.seats)} seats: no position could ever pass"
            )
        return self


class ReviewQuorum(_Strict):
    """``[council] review_quorum``: readable votes (APPROVE, REJECT, CONDITIONAL) per tier.

    Abstentions and lost or unreadable answers are not readable votes. Seed 004's high and
    critical tiers are 3:0, so by default two approvals beside a silent third seat do not
    pass them; a panel of two can then never pass high or critical, which is the point (the
    review is returned to a person), unless ``high = 2`` says otherwise on purpose.
    """

    low: int = Field(MIN_QUORUM, ge=MIN_QUORUM, le=9)
    medium: int = Field(MIN_QUORUM, ge=MIN_QUORUM, le=9)
    high: int = Field(3, ge=MIN_QUORUM, le=9)
    critical: int = Field(3, ge=MIN_QUORUM, le=9)

    def of(self, tier: str) -> int:
        """The quorum of ``tier`` (one of ``core.council.review.TIERS``)."""
        tiers = {"low": self.low, "medium": self.medium, "high": self.high}
        return {**tiers, "critical": self.critical}[tier]


class CouncilConfig(_Strict):
    """``[council]``: which panel to use, who groups positions, and the panels themselves."""

    panel: str = Field("default", description="The panel used when --panel is not given.")
    clerk: str | None = Field(
        None,
        description="Groups positions by meaning; default: a roster agent not seated, else seat 1.",
    )
    language: Literal["auto", "en", "ja"] = Field(
        "auto", description="Prompts and matrix language; auto follows the question."
    )
    risk: Literal["low", "medium", "high", "critical"] = Field(
        "medium", description="Review mode's default risk tier."
    )
    review_quorum: ReviewQuorum = Field(
        default_factory=ReviewQuorum,
        description="Review mode: readable votes each risk tier needs (low, medium, high, "
        "critical); default 2, 2, 3, 3.",
    )
    max_parallel: int = Field(9, ge=1, le=64, description="Seats asked at once.")
    timeout: int = Field(900, gt=0, description="Seconds one council turn may take.")
    panels: dict[str, PanelConfig] = Field(default_factory=dict)
    personalities: dict[str, str] = Field(
        default_factory=dict, description="Added to (or replacing) the shipped personalities."
    )

    @model_validator(mode="after")
    def _personalities_known(self) -> CouncilConfig:
        known = self.catalogue()
        for name, panel in self.panels.items():
            for i, seat in enumerate(panel.seats):
                if seat.personality is not None and seat.personality not in known:
                    raise ValueError(
                        f"council.panels.{name}.seats[{i}].personality: unknown personality "
                        f"{seat.personality!r}; known: {', '.join(sorted(known))}"
                    )
        if self.panels and self.panel not in self.panels:
            raise ValueError(
                f"council.panel: no panel named {self.panel!r}; "
                f"declared: {', '.join(sorted(self.panels))}"
            )
        return self

    def catalogue(self, language: str = "en") -> dict[str, str]:
        """Personality texts by name: the shipped ones in ``language``, then the config's."""
        shipped = PERSONALITIES_JA if language == "ja" else PERSONALITIES
        return {**shipped, **self.personalities}

    def check_agents(self, roster: list[str]) -> list[str]:
        """Problems with agent ids the council names that the roster does not have."""
        problems = []
        if self.clerk is not None and self.clerk not in roster:
            problems.append(f"council.clerk: {self.clerk!r} is not in [[agents]]")
        for name, panel in self.panels.items():
            for i, seat in enumerate(panel.seats):
                if seat.agent not in roster:
                    problems.append(
                        f"council.panels.{name}.seats[{i}].agent: {seat.agent!r} is not in "
                        "[[agents]]"
                    )
        return problems
