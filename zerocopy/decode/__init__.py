"""Decoders: PyAV on the CPU (software), and the OpenCV-style baseline."""
