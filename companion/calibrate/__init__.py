"""Calibration: learn one physical deck, camera and light from a photo of the deck laid out.

Entry points: `calibrate_images` (pixels in, profile dict out), `calibrate_files`
(what `companion calibrate` runs), `calibrate_profile` (for the dashboard); what a
profile learned is applied by `companion.vision.analyze.Analyzer` through `adapt`.
"""
from .label import CalibrationRefused

__all__ = ["CalibrationRefused", "calibrate_images", "calibrate_files", "calibrate_profile"]


def __getattr__(name):  # the heavy modules load only when used
    if name in ("calibrate_images", "calibrate_files", "calibrate_profile"):
        from . import run
        return getattr(run, name)
    raise AttributeError(name)
