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


def test_the_api_docs_examples_not_run_here_name_only_what_they_define():
    """The ```py blocks (they need a broker or a camera, so they are not run) still name nothing they do not import
    or define: ruff's undefined-name check on each (the MQTT example once used `zerocopy` without importing it)."""
    import subprocess
    import sys

    blocks = re.findall(r"```py\n(.*?)```", DOCS.read_text(), flags=re.S)
    assert blocks
    for i, block in enumerate(blocks):
        proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F821,F401",
                               "--stdin-filename", f"api_md_py_block_{i + 1}.py", "-"], input=block, text=True,
                              capture_output=True)
        assert proc.returncode == 0, f"docs/api.md ```py block {i + 1}:\n{proc.stdout}{proc.stderr}\n{block}"
