"""A simulation phase's ladder settings, as the host sets them (``simulation`` on the phase)."""

from pydantic import BaseModel, ConfigDict, Field


class SimulationSettings(BaseModel):
    """How the ladder plays and ranks.

    - ``active_agents``: each team's newest valid agents that keep playing (Kaggle's default: 3);
    - ``k``: the board ranks by the conservative skill μ − kσ;
    - ``settle_hours``: after the phase ends no new agent enters, episodes go on this long, then
      the board is final;
    - ``overage_seconds``: each agent's overage budget per episode (None: the environment's own
      ``remainingOverageTime``, 60 s for ConnectX);
    - ``explore``: the share of episodes whose opponents are drawn at random, not by similar μ;
    - ``episodes_in_flight``: how many ladder episodes of the phase may wait or run at once;
    - ``memory_mb``, ``cpus``: each agent's limits for an episode.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    active_agents: int = Field(default=3, ge=1, le=100)
    k: float = Field(default=3.0, ge=0, le=10)
    settle_hours: float = Field(default=0.0, ge=0, le=24 * 60)
    overage_seconds: float | None = Field(default=None, ge=0, le=600)
    explore: float = Field(default=0.1, ge=0, le=1)
    episodes_in_flight: int = Field(default=2, ge=1, le=1000)
    memory_mb: int = Field(default=1024, ge=64, le=65536)
    cpus: float = Field(default=1.0, gt=0, le=64)
