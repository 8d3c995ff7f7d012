"""What ``podium verify`` found: counts of what it checked, notes, and every break it found."""

from dataclasses import dataclass, field


@dataclass
class Report:
    competition: str = ""
    public_key: str = ""
    key_id: str = ""
    entries: int = 0
    head: str = ""
    opened: int = 0
    receipts: int = 0
    boards: int = 0
    recomputed: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        out = [
            f"competition: {self.competition}",
            f"server key: {self.public_key} (id {self.key_id})",
            f"chain: {self.entries} entries, head {self.head}",
            f"sealed values opened and checked: {self.opened}",
            f"receipts checked: {self.receipts}",
            f"boards checked: {self.boards}",
            f"scores recomputed from the files: {self.recomputed}",
        ]
        out += [f"note: {n}" for n in self.notes]
        out += [f"BROKEN: {p}" for p in self.problems]
        out.append("verdict: " + ("OK" if self.ok else f"{len(self.problems)} problem(s)"))
        return out
