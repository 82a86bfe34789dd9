"""What a camera's users ask of its tracked objects and its picture: zones (`zones.py`), lines (`lines.py`), and
the settings that draw them (`specs.py`, `geometry.py`)."""
