"""What runs on a frame after inference: the `Stage` contract, the chain of a run's stages, and the stages of the
labels rule. Tiles and region models (`roi/`) and tracking (`track/stage.py`) are stages too; a new
analytic is one module with one `Stage` and one setting (docs/architecture.md)."""

from zerocopy.stages.base import Activation, InputInfo, Stage, StageBase, StageReport
from zerocopy.stages.chain import Chained, StageChain

__all__ = ["Activation", "Chained", "InputInfo", "Stage", "StageBase", "StageChain", "StageReport"]
