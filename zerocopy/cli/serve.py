"""`zerocopy serve CONFIG.toml`: every camera of the config at once, events to the broker, status over HTTP,
until SIGTERM or Ctrl-C (then everything stops within 2 s: the frames in flight, the `end` of every open
object, the publisher's queue as far as it goes)."""

from __future__ import annotations

import threading
from collections.abc import Callable


def cmd_serve(args, say: Callable[[str], None]) -> int:
    import signal

    from zerocopy.cli.detect import stop_on_signals
    from zerocopy.cli.options import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE
    from zerocopy.serve.config import ServeConfigError, load_config
    from zerocopy.serve.engine import Engine
    from zerocopy.serve.http import StatusServer

    try:
        config = load_config(args.config)
    except ServeConfigError as e:
        for problem in e.problems:
            say(f"{args.config}: {problem}")
        return EXIT_USAGE
    if args.check:
        say(f"{args.config}: {len(config.cameras)} camera(s), no problem found")
        return EXIT_OK
    stop = threading.Event()
    with stop_on_signals(stop.set) as stopped:
        publisher = _publisher(config, say)
        engine = Engine(config.cameras, publisher, pictures=True, say=say, node=config.node,
                        publish_detections=bool(config.publish and config.publish.detections))
        server = StatusServer(config.http.listen, engine)
        try:
            server.start()
        except BaseException:
            engine.stop(timeout=1.0)  # closes the publisher (its `offline`)
            raise
        say(f"serving {len(engine.cameras())} camera(s) on {len(engine.groups)} compiled model(s) as node "
            f"{config.node}; status on http://{server.address}/api/cameras")
        engine.start()
        while not stop.wait(0.5):
            pass
    say("stopping")
    ended = engine.stop(timeout=2.0)
    server.close()
    if not ended:
        say("a camera did not stop within 2 s (its source was left to close on its own)")
    return EXIT_TERMINATED if stopped.signal == signal.SIGTERM else EXIT_INTERRUPTED if stopped.signal else EXIT_OK


def _publisher(config, say: Callable[[str], None]):
    """The MQTT publisher of the config's `[publish]`, or None."""
    if config.publish is None:
        return None
    from zerocopy.publish import MqttPublisher, MqttTarget

    target = MqttTarget.parse(config.publish.url, ca=config.publish.ca)
    say(f"publishing events to {target}")
    return MqttPublisher(target, node=config.node)
