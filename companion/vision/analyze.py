"""One picture in, the table out: the `Analyzer` the commands and the tracker call.

Models are loaded once when the Analyzer is made; `analyze(image)` then runs
find -> recognise -> assemble and returns the contract's JSON object.
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.game.deck import load_deck

from .assemble import Snake, TableCard, assemble
from .bodies import cards_by_bodies
from .cloth import cloth_cells
from .colour_groups import colours_by_groups
from .deck_counts import within_the_deck
from .exposure import well_exposed
from .extend import card_of, extend_snakes
from .fans import top_cards_of_fans
from .cut import KNOWN_SCORE, REGION_SCORE
from .find import find_cards
from .outline import CardOutline, order_corners, polygon_iou
from .profile import Profile, load_profile
from .paper import PAPER_FILE, PaperModel
from .quads import straight_sides
from .recognise import (FACE_KINDS, MODELS_DIR, CardReading, Recogniser, colours_by_the_table,
                        distinct_middle_colours)
from .refit import doubted_faces_refitted, faces_read_apart, pairs_read_apart, refit_oversized_faces

# an `unknown` under this share of the faces' median area may be a patterned cloth's cell
TILE_AREA = 0.25
# The finder trusts a guessed outline this much at most: a piece cut from a row, a card-sized
# rectangle on a side of a region (`split`), a fit to a blurred map's blob (`regions.ROUNDED_TRUST`).
# Such an outline read as no face must show this many of its sides on straight edges (`without_blobs`).
GUESSED_SCORE = 0.5
STRAIGHT_SIDES = 3
# A found outline overlapping a known card (intersection over union) this much but less than
# SAME_CARD was cut across it; from SAME_CARD on it is that card.  (Cards of a snake lie side by
# side, not on each other: a card laid now overlaps a known one by its corners at most.)
CUT_ACROSS = 0.15
SAME_CARD = 0.6


class Analyzer:
    def __init__(self, profile: Profile | str | Path | None = None,
                 models_dir: str | Path | None = None):
        self.profile = profile if isinstance(profile, Profile) else load_profile(profile)
        self.recogniser = Recogniser.load(models_dir)
        # the finder's learnt card-or-table map (`companion train` writes it beside the recogniser)
        self.paper = PaperModel.load(Path(models_dir or MODELS_DIR) / PAPER_FILE)
        # imported here: the calibration package builds on the vision, not the other way round
        from companion.calibrate.adapt import ProfileAdapter
        # what a calibration learned about this deck (its colours, its pairs, its kinds); None without one
        self.adapter = ProfileAdapter.from_profile(self.profile)
        # the deck the table's cards come from: the calibrated one's composition, if it recorded one
        calibrated = self.adapter.deck if self.adapter is not None else None
        self.deck = calibrated if calibrated is not None else load_deck()

    def read(self, image: np.ndarray, unlike_table: np.ndarray | None = None,
             picture: tuple[int, ...] | None = None, known: list | None = None,
             bare_table: np.ndarray | None = None) -> list[CardReading]:
        """Found and recognised cards, in reading order (top to bottom, left to right).
        `unlike_table`: what differs from the empty table, when a game is watched, and
        `bare_table` where the picture shows that table bare (both at the searched copy's
        scale, `find_cards`; no body is looked for on the bare table); `picture`:
        the shape of the whole picture the image is a part of, if it is one (`find_cards`);
        `known`: the outlines (four corners each, in `image`'s pixels) of cards known to lie
        there (a watched table's cards whose pixels did not change, `with_known_cards`)."""
        image, outlines = self.find(image, unlike_table, picture, known)
        outlines = with_known_cards(outlines, known or [])
        # a region the finder could not cut (a fan, most often) is no card, whatever it reads as:
        # the frame is not balanced on it, and only a fan's top card is looked for in it
        regions = {id(o) for o in outlines if o.score == REGION_SCORE}
        recognise = self._frame_reader(image, [o for o in outlines if id(o) not in regions])
        readings = faces_where_known(recognise(image, outlines), known or [], image, recognise)
        readings = [r for r in readings if id(r.outline) not in regions]
        read = {id(r.outline) for r in readings}
        unread = [o for o in outlines if id(o) not in read]
        readings = without_cloth(image, readings)
        # a fan of face-down cards outlined whole: its top card, the one that lies whole
        readings = top_cards_of_fans(image, readings, unread, recognise)
        # two cards end to end outlined as one: each half read
        readings = pairs_read_apart(image, readings, [o for o in unread if id(o) not in regions],
                                    recognise)
        readings = faces_read_apart(image, readings, recognise)
        # a face whose outline takes in part of its neighbour: its own outline
        readings = refit_oversized_faces(image, readings, recognise)
        # cards whose paper the table hides, read on their snake's body
        readings = cards_by_bodies(image, readings, recognise, self.deck, picture, bare_table)
        # the cards of a snake the finder had no outline for, read beyond their neighbours' open ends
        readings = extend_snakes(image, readings, recognise, self.deck)
        # a face read as `unknown` for an outline off its card: read again about it
        readings = doubted_faces_refitted(image, readings, recognise)
        # what no face's evidence vouches for is a card only by its shape
        readings = without_blobs(image, readings)
        readings = distinct_middle_colours(readings, self.recogniser.colours)
        # an end split between two colours: the one this picture's sure ends of them say (a
        # calibrated deck's colours are the profile's, measured under this very light)
        if self.adapter is None:
            readings = colours_by_the_table(readings, self.recogniser.colours)
        # two neighbouring colours, where this picture's ends of them make two groups
        readings = colours_by_groups(readings, self.recogniser.colours)
        # no more copies of a card than the deck holds: the less sure of two red tails is another
        readings = within_the_deck(readings, self.deck, self.recogniser.colours)
        short = np.median([r.outline.short_side for r in readings]) if readings else 1.0
        band = max(1.0, short)
        readings.sort(key=lambda r: (round(float(r.outline.centre[1]) / band), float(r.outline.centre[0])))
        return readings

    def find(self, image: np.ndarray, unlike_table: np.ndarray | None = None,
             picture: tuple[int, ...] | None = None, known: list | None = None) -> tuple[np.ndarray, list]:
        """The picture the cards are to be read in, and the card outlines the finder found
        (`known`: as `read` says, rows of them not cut again)."""
        if self.adapter is None:
            image = seen = well_exposed(image)
        else:
            # a calibrated deck's light, when outside every trained light, hides cards from the
            # finder (`finder_view`); read, a dim frame is brightened as without a profile: the
            # profile's inks are measured against the paper, which one gain leaves as they were,
            # while the kind model learnt from pictures exposed for the paper
            seen = self.adapter.finder_view(image)
            image = well_exposed(image)
        return image, find_cards(seen, self.profile, paper=self.paper, unlike_table=unlike_table, fans=True,
                                 picture=picture, known=known)

    def _frame_reader(self, image: np.ndarray, outlines: list):
        """How outlines of this frame (every stage reads this `image`) are read: for a calibrated
        deck, with its light, kinds and colours, the frame balanced once, on the finder's
        outlines (balanced again on each stage's own outlines, cards guessed on a pale table
        where their paper is lost would balance the frame on the table)."""
        if self.adapter is None:
            return self.recogniser.recognise
        return self.adapter.frame_reader(image, outlines, self.recogniser)

    def analyze(self, image: np.ndarray, path: str | None = None,
                size: tuple[int, int] | None = None, unlike_table: np.ndarray | None = None,
                picture: tuple[int, ...] | None = None, known: list | None = None,
                bare_table: np.ndarray | None = None) -> dict:
        """The contract's JSON object for one image.

        `size` is the (width, height) the coordinates must refer to, when the
        pixels were decoded smaller than the file (gigantic images).
        """
        h, w = image.shape[:2]
        width, height = size or (w, h)
        scale = width / w
        readings = self.read(image, unlike_table, picture, known, bare_table)
        snakes, problems = assemble_readings(readings)
        cards = []
        for i, r in enumerate(readings):
            cards.append({
                "id": i,
                "kind": r.kind,
                "colours": list(r.colours),
                "ends": [[round(x * scale, 1), round(y * scale, 1)] for x, y in r.ends],
                "corners": [[round(float(x) * scale, 1), round(float(y) * scale, 1)]
                            for x, y in r.outline.corners],
                "confidence": r.confidence,
                # (an addition to the contract) the next likeliest colourings, colours in the
                # order of "ends": what a tracker weighs against the deck when the camera is unsure
                "alternatives": [{"colours": list(c), "confidence": p} for c, p in r.alternatives
                                 if list(c) != list(r.colours)],
            })
        return {
            "image": {"path": path, "width": int(width), "height": int(height)},
            "cards": cards,
            # "codes" (an addition to the contract): the chain as read, middles' colours in chain order
            "snakes": [{"cards": list(s.cards), "complete": s.complete, "codes": [c.code for c in s.chain]}
                       for s in snakes],
            "problems": problems,
        }


def with_known_cards(outlines: list[CardOutline], known: list) -> list[CardOutline]:
    """The finder's outlines with each known card's (`Analyzer.read`) in place of those cut
    across it.

    Cards lying end to end show the finder one region of paper; cut at the wrong seam, an
    outline takes half of two cards, both are lost and a card is invented between them.  A
    card known to lie where it lay is not cut again: an outline overlapping it, but not
    it (`CUT_ACROSS`), is dropped; one nearly its own (`SAME_CARD`) is kept, fitted afresh;
    and where nothing was found the known outline is read.  The cards laid beside it are
    then found beyond its open ends (`extend_snakes`) as beyond any card found."""
    if not known:
        return outlines
    cards = [np.asarray(k, np.float64).reshape(4, 2) for k in known]
    iou = np.array([[polygon_iou(o.corners, k) for k in cards] for o in outlines]).reshape(-1, len(cards))
    cut = ((iou >= CUT_ACROSS) & (iou < SAME_CARD)).any(axis=1)
    found = (iou[~cut] >= SAME_CARD).any(axis=0)
    return [o for o, c in zip(outlines, cut) if not c] + \
        [CardOutline(order_corners(k), KNOWN_SCORE) for k, f in zip(cards, found) if not f]


def faces_where_known(readings: list[CardReading], known: list, image: np.ndarray,
                      recognise) -> list[CardReading]:
    """The readings, each known card (`with_known_cards`) whose outline found afresh reads as no
    face read instead on its known outline, when that reads as a face.

    An outline found afresh on a known card (`SAME_CARD` of it) is kept, since the card may have
    been nudged; but one a few pixels off its card cuts the art's ends, reads as `unknown`, and a
    card laid beside it then finds a guess read on the body there (`extend_snakes`).  The known
    outline is where the tracker settled the card, its pixels unchanged since."""
    if not known:
        return readings
    cards = [order_corners(np.asarray(k, np.float64).reshape(4, 2)) for k in known]
    faces = [r for r in readings if r.kind in FACE_KINDS]
    doubted = [r for r in readings if r.kind not in FACE_KINDS]
    again = {}
    for k in cards:
        if any(polygon_iou(r.outline.corners, k) >= SAME_CARD for r in faces):
            continue
        fresh = [r for r in doubted if polygon_iou(r.outline.corners, k) >= SAME_CARD]
        if fresh:
            again[id(fresh[0])] = CardOutline(k, KNOWN_SCORE)
    if not again:
        return readings
    by_outline = {id(r.outline): r for r in recognise(image, list(again.values()))}
    out = []
    for r in readings:
        kept = by_outline.get(id(again[id(r)])) if id(r) in again else None
        out.append(kept if kept is not None and kept.kind in FACE_KINDS else r)
    return out


def without_cloth(image: np.ndarray, readings: list[CardReading]) -> list[CardReading]:
    """The readings less a patterned cloth's cells read as cards (`cloth.cloth_cells`).

    Plain and dark, a cell passes for a face-down card; and the recogniser
    calls what is no Hisss face `unknown`, so a cell can pass for another
    game's card too.  A face shows its art, which no cloth repeats, and is
    kept.  Another game's cards laid out in a grid repeat around each other
    as a cloth's cells do, so an `unknown` is taken for a cell only when it is
    also far smaller than the faces on the table (TILE_AREA): a gingham's
    squares are a tenth of a card or less, other games' cards are not that small.
    """
    faces = [r.outline.area for r in readings if r.kind in FACE_KINDS]
    tile = TILE_AREA * float(np.median(faces)) if faces else 0.0
    plain = [i for i, r in enumerate(readings)
             if r.kind == "back" or (r.kind == "unknown" and r.outline.area < tile)]
    if not plain:
        return readings
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    cells = cloth_cells(gray, [readings[i].outline.corners for i in plain])
    dropped = {i for i, cell in zip(plain, cells) if cell}
    return [r for i, r in enumerate(readings) if i not in dropped]


def without_blobs(image: np.ndarray, readings: list[CardReading]) -> list[CardReading]:
    """The readings less each `unknown` or `back` whose outline the finder only guessed
    (`GUESSED_SCORE`) and whose sides do not lie on straight edges of the picture
    (`quads.straight_sides`).

    A face of the deck proves itself by its art; what the recogniser calls `unknown` (or a
    plain back) is a card only by its shape.  An outline fitted to a region's own sides says
    so, but a guessed one (a piece cut from a row, a card-sized rectangle on a side of a
    region, a fit to a blurred map's blob) fits anything: a face, a stool's round seat, a
    drawer front.  A card's sides are straight wherever it lies; one may lie against a
    neighbour or under a hand, so three of the four must show (`STRAIGHT_SIDES`)."""
    return [r for r in readings if not (r.kind in ("unknown", "back") and r.outline.score <= GUESSED_SCORE
                                        and straight_sides(image, r.outline.corners) < STRAIGHT_SIDES)]


def table_cards(readings: list[CardReading]) -> list[TableCard]:
    out = []
    for i, r in enumerate(readings):
        card = card_of(r)
        if card is None:
            continue
        c = r.outline.centre
        out.append(TableCard(i, card, tuple((float(x), float(y)) for x, y in r.ends),
                             (float(c[0]), float(c[1])), r.outline.short_side))
    return out


def assemble_readings(readings: list[CardReading]) -> tuple[list[Snake], list[dict]]:
    return assemble(table_cards(readings))
