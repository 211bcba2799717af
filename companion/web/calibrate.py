"""The set-up page's calibration step: one photo of the laid-out deck -> a profile.

The work is `companion calibrate` (`companion.calibrate.calibrate_profile`);
this module is the one place the dashboard calls it.
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
        from companion.calibrate import calibrate_profile
    except ImportError:
        raise CalibrationUnavailable(
            "calibration is not available in this build; the default deck is used") from None
    try:
        summary = calibrate_profile([str(p) for p in photos], str(out))
    except ValueError as exc:   # refused (not a whole deck), or not an image
        raise CalibrationUnavailable(" ".join(str(exc).split())) from None
    return CalibrationResult(Path(out), str(summary))
