"""zerocopy.refusals: every refusal carries a stable code, and the summary maps codes to words."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import zerocopy
from zerocopy.refusals import SHORT, Code, Reason, summary

ROOT = Path(zerocopy.__file__).parent


def test_every_refusal_the_package_raises_carries_a_code():
    """A `PathUnavailable({path: message})` whose message is a bare string would lose its words in the
    summary line: each raised message must be a `Reason` (or one passed on from another refusal)."""
    bare = []
    for path in ROOT.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "PathUnavailable" not in text:  # no such call in it: not worth parsing
            continue
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PathUnavailable"
                    and node.args and isinstance(node.args[0], ast.Dict)):
                for value in node.args[0].values:
                    if isinstance(value, ast.Constant | ast.JoinedStr | ast.BinOp):
                        bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bare == []


def test_every_code_but_other_has_words():
    assert set(SHORT) == set(Code) - {Code.OTHER}


def test_the_summary_names_the_most_fundamental_reasons_by_code_whatever_the_wording():
    reasons = {"zero-copy": [Reason(Code.CODEC, "VA-API cannot decode hevc from /v/a.mp4 on /dev/dri/renderD128: x")],
               "copy": [Reason(Code.VA_DEVICE, "cannot open the VA device /dev/dri/renderD128: y"),
                        Reason(Code.NO_VAAPI, "some new wording")]}
    assert summary(reasons) == "no VA-API in PyAV; the VA device cannot be opened"
    assert summary(reasons, most=3).endswith("; the GPU cannot decode this codec")
    assert summary({"copy": ["an uncoded message: with detail"]}) == "an uncoded message"


def test_a_reason_is_its_message_and_keeps_its_code_when_copied():
    r = Reason(Code.NO_GPU, "OpenVINO sees no GPU")
    assert r == "OpenVINO sees no GPU" and "; ".join([r, r]) == "OpenVINO sees no GPU; OpenVINO sees no GPU"
    assert pickle.loads(pickle.dumps(r)).code is Code.NO_GPU
