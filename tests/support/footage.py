"""Footage as a fixed camera sees it (issue 9): the crowd, face-free and large-face clips the footage
tests (and the iGPU tests) run."""

from zerocopy.samples import FACE_FREE_SCENES, ClipSpec, Person, crowd

CROWDS = {
    "crowd-720p.mp4": ClipSpec(width=1280, height=720, frames=24, background="motorcycle", noise=2.0,
                               people=crowd(6, seed=1)),
    "crowd-1080p-hevc.mp4": ClipSpec(width=1920, height=1080, frames=16, codec="libx265", background="chelsea",
                                     noise=2.0, people=crowd(8, seed=14)),
}
FREE = {
    f"free-{bg}.mp4": ClipSpec(width=1920 if i % 2 else 1280, height=1080 if i % 2 else 720, frames=12,
                               codec="libx265" if i % 2 else "libx264", face=None, background=bg, pan=True,
                               noise=2.0)
    for i, bg in enumerate(FACE_FREE_SCENES)
}
LARGE = {
    "large-720p.mp4": ClipSpec(width=1280, height=720, frames=12, background="coffee", noise=2.0,
                               people=(Person(photo="astronaut", face_height=0.6, x=0.35, y=0.55, drift=0.2),)),
    "large-1080p.mp4": ClipSpec(width=1920, height=1080, frames=12, background="rocket", noise=2.0,
                                people=(Person(photo="grace_hopper", face_height=0.4, x=0.25, y=0.45, drift=0.1),
                                        Person(photo="astronaut", face_height=0.3, x=0.75, y=0.4, flip=True))),
}

