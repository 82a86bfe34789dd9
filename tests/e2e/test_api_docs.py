"""docs/api.md's examples run as they are written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_api_docs_examples_run_as_written(tmp_path, monkeypatch, face_model_path, capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"docs/api.md block {i + 1}", "exec"), {"__name__": f"api_doc_{i}"})
        except Exception as e:  # pragma: no cover - the message says which block broke
            pytest.fail(f"docs/api.md block {i + 1} raised {type(e).__name__}: {e}\n{block}")
    out = capsys.readouterr().out
    assert "faces" in out and "model:" in out
