"""A TensorFlow.js graph model made a frozen TensorFlow graph that OpenVINO reads.

A TF.js graph model is a GraphDef written as JSON (`modelTopology`) whose constants are kept apart, in binary
shards a manifest describes (`weightsManifest`). `frozen_graph` puts them back together and writes the GraphDef in
protobuf's wire format, which `openvino.Core().read_model` reads as any frozen `.pb`; no TensorFlow is needed.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

# tensorflow/core/framework/types.proto
_DTYPES = {"DT_FLOAT": 1, "DT_DOUBLE": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 5, "DT_INT8": 6,
           "DT_STRING": 7, "DT_INT64": 9, "DT_BOOL": 10, "DT_HALF": 19}
_NUMPY = {"float32": (np.float32, "DT_FLOAT"), "int32": (np.int32, "DT_INT32"), "bool": (np.bool_, "DT_BOOL")}
_CAST = {"DT_FLOAT": "<f4", "DT_INT32": "<i4", "DT_INT64": "<i8", "DT_BOOL": "?", "DT_HALF": "<f2"}
_BY_CODE = {code: name for name, code in _DTYPES.items()}
# the fused kernels TensorFlow's grappler (and TF.js's converter) made, which OpenVINO reads as their parts
_FUSED = {"_FusedConv2D": "Conv2D", "FusedDepthwiseConv2dNative": "DepthwiseConv2dNative"}
_FUSED_ONLY = {"fused_ops", "num_args", "epsilon", "leakyrelu_alpha"}


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64 is its two's complement, ten bytes long
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): a message, a string, bytes or a packed repeated value."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(int(value))


def _shape(shape: dict[str, Any]) -> bytes:
    if shape.get("unknownRank"):
        return _int(3, 1)
    return b"".join(_field(2, _int(1, int(d.get("size", 0)))) for d in shape.get("dim", []))


def _tensor(tensor: dict[str, Any], content: bytes | None) -> bytes:
    out = _int(1, _DTYPES[tensor["dtype"]]) + _field(2, _shape(tensor.get("tensorShape", {})))
    return out + (_field(4, content) if content is not None else b"")


def _packed(values: Iterable[bytes]) -> bytes:
    return b"".join(values)


def _list(value: dict[str, Any]) -> bytes:
    """An AttrValue.ListValue: strings, ints, floats, bools, types, shapes (attr_value.proto)."""
    out = b"".join(_field(2, base64.b64decode(s)) for s in value.get("s", []))
    if "i" in value:
        out += _field(3, _packed(_varint(int(i)) for i in value["i"]))
    if "f" in value:
        out += _field(4, _packed(struct.pack("<f", float(f)) for f in value["f"]))
    if "b" in value:
        out += _field(5, _packed(_varint(int(bool(b))) for b in value["b"]))
    if "type" in value:
        out += _field(6, _packed(_varint(_DTYPES[t]) for t in value["type"]))
    return out + b"".join(_field(7, _shape(s)) for s in value.get("shape", []))


def _attr(value: dict[str, Any], content: bytes | None) -> bytes:
    """One AttrValue (attr_value.proto), from its JSON form."""
    encoders: dict[str, Callable[[Any], bytes]] = {
        "list": lambda v: _field(1, _list(v)),
        "s": lambda v: _field(2, base64.b64decode(v)),
        "i": lambda v: _int(3, int(v)),
        "f": lambda v: _varint(4 << 3 | 5) + struct.pack("<f", float(v)),
        "b": lambda v: _int(5, int(bool(v))),
        "type": lambda v: _int(6, _DTYPES[v]),
        "shape": lambda v: _field(7, _shape(v)),
        "tensor": lambda v: _field(8, _tensor(v, content)),
    }
    (kind, inner), = value.items()
    return encoders[kind](inner)


def _unfused(node: dict[str, Any]) -> list[dict[str, Any]]:
    """A fused convolution as the convolution, its BiasAdd and its activation, the last keeping its name."""
    if node["op"] not in _FUSED:
        return [node]
    attr = node["attr"]
    ops = [base64.b64decode(s).decode() for s in attr["fused_ops"]["list"]["s"]]
    if ops[0] != "BiasAdd" or len(ops) > 2 or node["attr"].get("num_args", {}).get("i", "1") != "1":
        raise ValueError(f"{node['name']}: cannot unfuse {node['op']} with {ops}")
    name, (x, w, b) = node["name"], node["input"]
    conv_attr = {k: v for k, v in attr.items() if k not in _FUSED_ONLY}
    t = {"T": attr["T"]}
    parts = [{"name": f"{name}/conv", "op": _FUSED[node["op"]], "input": [x, w], "attr": conv_attr},
             {"name": name if len(ops) == 1 else f"{name}/bias", "op": "BiasAdd", "input": [f"{name}/conv", b],
              "attr": {**t, "data_format": attr["data_format"]}}]
    if len(ops) == 2:
        parts.append({"name": name, "op": ops[1], "input": [f"{name}/bias"], "attr": t})
    return parts


def _node(node: dict[str, Any], weight: np.ndarray | None) -> bytes:
    content = None
    if weight is not None:  # TF.js keeps int64 constants as int32: back to the dtype the node declares
        declared = node["attr"]["dtype"]["type"]
        content = weight.astype(_CAST[declared]).tobytes()
    out = _field(1, node["name"].encode()) + _field(2, node["op"].encode())
    out += b"".join(_field(3, i.encode()) for i in node.get("input", []))
    for key, value in node.get("attr", {}).items():
        if key.startswith("_"):  # grappler's notes to itself
            continue
        out += _field(5, _field(1, key.encode()) + _field(2, _attr(value, content if key == "value" else None)))
    return out


def _weights(manifest: list[dict[str, Any]], shards: Callable[[str], bytes]) -> dict[str, np.ndarray]:
    """Each constant's raw little-endian bytes, in the dtype its node declares (quantized ones restored)."""
    out: dict[str, np.ndarray] = {}
    for group in manifest:
        data = b"".join(shards(path) for path in group["paths"])
        offset = 0
        for w in group["weights"]:
            count = int(np.prod(w["shape"], dtype=np.int64))
            dtype, _ = _NUMPY[w["dtype"]]
            quant = w.get("quantization")
            if quant is None:
                size = count * np.dtype(dtype).itemsize
                values = np.frombuffer(data, dtype, count, offset)
            elif quant["dtype"] == "float16":
                size = count * 2
                values = np.frombuffer(data, np.float16, count, offset).astype(dtype)
            else:  # uint8 or uint16, affine
                stored = np.dtype(quant["dtype"])
                size = count * stored.itemsize
                raw = np.frombuffer(data, stored, count, offset).astype(np.float32)
                values = (raw * quant["scale"] + quant["min"]).astype(dtype)
            out[w["name"]] = values
            offset += size
    return out


def frozen_graph(model: dict[str, Any], shards: Callable[[str], bytes]) -> bytes:
    """The GraphDef of a TF.js graph model (its parsed model.json), constants filled from `shards` (a shard's
    path in the manifest -> its bytes), serialised as a frozen TensorFlow `.pb`."""
    weights = _weights(model["weightsManifest"], shards)
    nodes = [part for n in model["modelTopology"]["node"] for part in _unfused(n)]
    return b"".join(_field(1, _node(n, weights.get(n["name"]))) for n in nodes)
