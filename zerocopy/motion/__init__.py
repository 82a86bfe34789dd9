"""The motion gate (`--motion`): a small luma picture made by each path's own scaler (`luma.py`), a numpy motion
detector on it (`detector.py`), and the rule that picks the frames to infer among those `--detect-fps` takes
(`gate.py`). `paths/base.py`'s `PreparedStream` runs it; the `motion` stage (`stages/motion.py`) sums it up.
docs/analytics.md tells the design and what it costs."""
