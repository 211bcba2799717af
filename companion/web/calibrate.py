"""The set-up page's calibration step: one photo of the laid-out deck -> a profile.

The work is `companion calibrate` (issue 5).  This module is the one place the
dashboard calls it, so wiring the real calibration in is a change here only.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class CalibrationUnavailable(ValueError):
    """No calibration in this build, or the photo cannot be a full deck."""


@dataclass(frozen=True)
class CalibrationResult:
    profile: Path       # the profile file written, for `--profile`
    summary: str        # what was learned and how sure, as the command prints it


def calibrate_from_photos(photos: list[Path], out: Path) -> CalibrationResult:
    """Run the deck calibration on `photos` and write the profile to `out`."""
    try:
        from companion.vision.calibrate import calibrate_profile  # issue 5's entry point
    except ImportError:
        raise CalibrationUnavailable(
            "calibration is not available in this build yet; the default deck is used") from None
    summary = calibrate_profile([str(p) for p in photos], str(out))
    return CalibrationResult(Path(out), str(summary))
