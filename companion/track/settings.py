"""The tracker's settings and what it reports (`TrackEvent`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .gate import GateSettings


@dataclass(frozen=True)
class TrackerSettings:
    # Stillness is what separates a settled table from a hand pausing while it lays a card
    # (a pause of a few tenths of a second); see `for_fps`.
    still_frames: int = 3         # frames equal to their predecessor before the table is read
    readings: int = 3             # readings of one still table voted together, at most
    agree_readings: int = 2       # ... fewer when this many in a row say exactly the same
    min_readings: int = 2         # fewer before motion resumes was a pause, not a settled table
    reading_gap: int = 1          # read every n-th still frame (spreads readings at high fps)
    max_new_cards: int = 2        # more new cards at once cannot be one turn: desync
    max_gap_cards: int = 4        # ... after a drop-out, more than this many unseen turns
    gap_illegal: int = 1          # fouls believed among moves seen only together (`gap`)
    max_hidden: float = 0.34      # share of the table that may be hidden before it is a desync
    unmoved_fraction: float = 0.1 # under this share of changed pixels, nothing happened at a card
    nudged_fraction: float = 0.3  # ... once moved back (at most `nudge_reach` small pixels,
    nudge_reach: int = 6          # `dating.nudged_test`): the card was there, only nudged
    confirm_take: int = 2         # settled tables a card must be missed in to count as gone
    max_deferred: int = 2         # settled readings in a row a change may wait to be read whole
    accept_after: int = 3         # unexplainable settled readings in a row before taking the table
    doubt_confidence: float = 0.9 # a new card never read as surely as this times the table's
                                  # typical card waits for another settled table
    doubt_ratio: float = 2.0      # a leading reading weaker than this times the next is doubtful
    # a reading the analyser ranked next, this share of the leader's weight, may name a card
    # whose leading reading the deck holds no more of (new, or settled and over-counted)
    alternative_share: float = 0.25
    correction_ratio: float = 3.0 # a settled card is renamed when another reading outweighs it so
    laid_reach: float = 0.7       # card widths: a card just laid, read touching nothing, is linked
                                  # to a snake's open end of its colour this near (`_links_to_laid`)
    region_reach: float = 1.3     # longest card sides the box around a change is grown by
    # A table known well, read around its change only (`regions`), is read once: the rest of
    # the picture is judged by its pixels, and a still picture is misread the same way in
    # every frame of it (the next settled table is read afresh).
    region_readings: int = 1
    gate: GateSettings = field(default_factory=GateSettings)

    @classmethod
    def for_fps(cls, fps: float | None, **overrides) -> "TrackerSettings":
        """The settings for a real source: waits that last the same time whatever the frame
        rate (tuned at 10 fps), and at most two readings of a whole picture -- measured with
        the real analyser on rendered games, a third one when two disagree bought no
        accuracy (a still picture is misread alike in every frame; the next settled table is
        read afresh) for a quarter of the analysis time.  (The class defaults keep three, so
        that tests know which reading a fault hits.)"""
        fps = fps if fps and 1 <= fps <= 240 else 10.0
        return cls(**{"still_frames": max(2, round(0.3 * fps)),
                      "reading_gap": max(1, round(0.1 * fps)), "readings": 2, **overrides})


@dataclass
class TrackEvent:
    kind: str                     # move | table | desync | resync | correction
    frame: int
    data: dict                    # JSON-ready
    stills: tuple = (None, None)  # (before, after) pictures for a move's evidence
    outlines: tuple = ((), ())    # the involved cards' corners in those pictures


