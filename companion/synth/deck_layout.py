"""Calibration photographs: one whole deck laid out face-up, and later games with that same deck.

`companion calibrate` learns one physical deck under one light.  To measure it
the renderer must show *the same printing* twice: once laid out for the
calibration photo (`render_deck_photo`: every card face-up, any orientation,
none touching, optionally beside a printed marker mat) and then in ordinary
game scenes of any tier (`render_deck_scene`).  A `DeckLook` pins what is
physical about a deck (art style, printing, aspect ratio); a `LightSetup` pins
a room's lamp and the camera's white balance.

`HELD_OUT_LIGHT` is a lamp no training tier draws (every tier's colour
temperature is 2700 K or more and its camera corrects at least a fifth of the
cast): with `HELD_OUT_STYLE` it makes the unseen deck of the calibration proof.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import cv2
import numpy as np

from companion.game.cards import Card
from companion.game.deck import Deck, load_deck

from .layout import Item, Pose
from .light import kelvin_gains
from .props import Sprite, foreign_card
from .draw import draw
from .faces import FaceCache
from .scene import Scene, lay_out
from .truth import truth_of, visibility_of, visible_truth
from .world import World, make_world
from .states import POOL_SIZE, pooled_game
from .styles import Print, check_style, sample_print
from .tiers import TIERS, get_tier


@dataclass(frozen=True)
class DeckLook:
    """What one physical deck looks like: style, printing and card shape."""
    style: str
    print_: Print
    aspect: float           # long / short side
    card_w_mm: float        # short side


@dataclass(frozen=True)
class LightSetup:
    """A room's lamp as the camera records it."""
    name: str
    kelvin: float
    white_balance: float    # share of the cast the camera corrects (1 = all)
    exposure: float | None = None   # the camera's brightness multiplier (None: the tier draws one)


HELD_OUT_LIGHT = LightSetup("sodium-orange street-lamp light, camera white balance off", 2100.0, 0.0)


def deck_look(style: str, deck_seed: int) -> DeckLook:
    """The printing of deck number `deck_seed` in `style` (same arguments, same deck)."""
    check_style(style)
    rng = np.random.default_rng([int(deck_seed), 5_000_011])
    print_ = sample_print(style, rng)
    return DeckLook(style, print_, float(rng.uniform(1.0, 1.6)), float(rng.uniform(50.0, 64.0)))


def _rngs(seed: int, salt: int) -> dict:
    streams = np.random.SeedSequence([int(seed), salt]).spawn(7)
    return dict(zip(("camera", "art", "surface", "light", "state", "layout", "sensor"),
                    (np.random.default_rng(s) for s in streams)))


def _lit(tier_name: str, light: LightSetup | None):
    tier = get_tier(tier_name)
    if light is None:
        return tier
    tier = replace(tier, kelvin=(light.kelvin, light.kelvin),
                   white_balance=(light.white_balance, light.white_balance))
    return tier if light.exposure is None else replace(tier, exposure=(light.exposure, light.exposure))


def deck_and_light_of(world: World) -> tuple[DeckLook, LightSetup]:
    """The deck and the room of a rendered world (a filmed game's): to photograph that deck
    laid out for calibration, as its players would before they start."""
    look = world.look
    deck = DeckLook(world.style, world.print_, world.aspect, world.card_mm[0])
    light = LightSetup(f"the game's lamp ({look.kelvin:.0f} K, white balance {look.white_balance:.2f}, "
                       f"exposure {look.exposure:.2f})", look.kelvin, look.white_balance, look.exposure)
    return deck, light


def _use_deck(world: World, deck: DeckLook) -> None:
    """Swap the world's random printing for the given deck (its size in mm stays as drawn)."""
    w = world.card_mm[0]
    world.style = deck.style
    world.print_ = deck.print_
    world.aspect = deck.aspect
    world.card_mm = (w, w * deck.aspect)
    world.faces = FaceCache(deck.print_, deck.aspect)


# --------------------------------------------------------------------------- marker mat

MAT_MM = (297.0, 210.0)          # A4 landscape
MARKER_MM = 40.0
MARKER_MARGIN_MM = 12.0
MARKER_DICT = "DICT_4X4_50"
MARKER_IDS = (0, 1, 2, 3)        # top-left, top-right, bottom-right, bottom-left


def marker_positions_mm() -> dict[int, np.ndarray]:
    """Each marker's four corners (its own top-left first, clockwise) in mat millimetres."""
    W, H = MAT_MM
    m, s = MARKER_MARGIN_MM, MARKER_MM
    origins = [(m, m), (W - m - s, m), (W - m - s, H - m - s), (m, H - m - s)]
    return {i: np.array([[x, y], [x + s, y], [x + s, y + s], [x, y + s]], float)
            for i, (x, y) in zip(MARKER_IDS, origins)}


def mat_image(px_per_mm: float = 6.0) -> np.ndarray:
    """The printable mat as a BGR picture: four ArUco markers and a line of instructions."""
    W, H = MAT_MM
    img = np.full((int(round(H * px_per_mm)), int(round(W * px_per_mm)), 3), 255, np.uint8)
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, MARKER_DICT))
    side = int(round(MARKER_MM * px_per_mm))
    for i, quad in marker_positions_mm().items():
        marker = cv2.aruco.generateImageMarker(dictionary, i, side)
        x, y = (quad[0] * px_per_mm).round().astype(int)
        img[y:y + side, x:x + side] = marker[..., None]
    text = ["Hisss companion calibration mat", "print at 100% on A4, lay it flat beside the cards"]
    for k, line in enumerate(text):
        cv2.putText(img, line, (int(W * px_per_mm * 0.25), int(H * px_per_mm * (0.47 + 0.07 * k))),
                    cv2.FONT_HERSHEY_SIMPLEX, px_per_mm * 0.22, (60, 60, 60), max(1, int(px_per_mm * 0.4)),
                    cv2.LINE_AA)
    return img


def mat_sprite(ppm: float) -> Sprite:
    # the scene's table-to-picture mapping mirrors a sprite's rows (cards are symmetric, print is not)
    img = np.ascontiguousarray(mat_image(max(2.0, ppm))[::-1])
    return Sprite(img, np.ones(img.shape[:2], np.float32), MAT_MM, 0.1)


# --------------------------------------------------------------------------- the laid-out deck

MIN_PAPER_CONTRAST = 40.0   # Lab distance between the card paper and the surface under it


def _contrast(background: np.ndarray, paper_bgr, look) -> float:
    """How far apart the paper and the surface look under the room's light (Lab distance)."""
    table = np.median(background[::8, ::8].reshape(-1, 3), axis=0)
    cast = kelvin_gains(look.kelvin) ** (1.0 - look.white_balance)
    cast = cast / cast.mean()
    pair = np.clip(np.array([[table * cast, np.asarray(paper_bgr) * cast]], np.float32) / 255.0, 0, 1)
    lab = cv2.cvtColor(pair, cv2.COLOR_BGR2Lab)[0]
    return float(np.linalg.norm(lab[0] - lab[1]))


def _grid(n: int, image_aspect: float) -> tuple[int, int]:
    cols = max(1, math.ceil(math.sqrt(n * image_aspect)))
    return cols, math.ceil(n / cols)


def render_deck_photo(seed: int, deck: DeckLook, cards: Sequence[Card | str] | None = None,
                      size: tuple[int, int] = (1600, 1200), tier: str = "easy",
                      light: LightSetup | None = None, markers: bool = False,
                      foreign: int = 0, touching: int = 0) -> Scene:
    """A photo of a deck laid out face-up in loose rows, any orientation, no card touching.

    `cards` defaults to the whole default deck; `foreign` adds other games' cards
    in free places; `touching` pushes that many pairs of cards together (a photo
    calibration must refuse).  The truth lists every Hisss card (`chain` None).
    """
    cards = [c if isinstance(c, Card) else Card.parse(c) for c in (cards if cards is not None else load_deck().cards())]
    rngs = _rngs(seed, 91)
    rl = rngs["layout"]
    order = rl.permutation(len(cards))
    slots = len(cards) + foreign + (6 if markers else 0)
    cols, rows = _grid(slots, size[0] / size[1])
    w, h = 1.0, deck.aspect                         # in card short sides for now
    cell = math.hypot(w, h) * 1.12                 # any turn fits without touching a neighbour
    card_px = min(size[0] / (cols * cell), size[1] / (rows * cell)) * 0.86
    t = _lit(tier, light)
    # the photographer frames the layout: nearly square on, the rows along the picture
    # on a plain cloth or board, as the guide asks (calibration/README.md)
    t = replace(t, tilt_deg=(min(t.tilt_deg[0], 8.0), min(t.tilt_deg[1], 8.0)), roll_deg=(-6.0, 6.0),
                surfaces=("felt", "laminate"))
    for attempt in range(12):
        world = make_world(t, rngs, deck.style, size, card_px=card_px)
        if _contrast(world.background, deck.print_.paper_bgr, world.look) >= MIN_PAPER_CONTRAST:
            break
        # as the guide asks: a surface the cards stand out from (another cloth)
        rngs["surface"] = np.random.default_rng([int(seed), 92, attempt])
        rngs["camera"] = np.random.default_rng([int(seed), 93, attempt])
    _use_deck(world, deck)
    cw, ch = world.card_mm
    step = cell * cw
    origin = -np.array([cols - 1, rows - 1]) * step / 2
    free = [(c, r) for r in range(rows) for c in range(cols)]
    items: list[Item] = []
    if markers:  # the mat takes a block of cells in a corner of the layout
        span = (math.ceil(MAT_MM[0] / step), math.ceil(MAT_MM[1] / step))
        block = {(c, r) for c in range(span[0]) for r in range(span[1])}
        free = [p for p in free if p not in block]
        centre = origin + (np.array(span) - 1) * step / 2
        items.append(Item(Pose(centre, np.array([0.0, 1.0]), *MAT_MM), what="prop", sprite=mat_sprite(world.sprite_ppm)))
    free = [free[i] for i in rl.permutation(len(free))]
    if len(free) < len(cards) + foreign:
        raise ValueError("the layout has too few places for these cards")
    poses = []
    for (c, r) in free[:len(cards) + foreign]:
        turn = rl.integers(4) * math.pi / 2 + rl.uniform(-0.25, 0.25)
        up = np.array([-math.sin(turn), math.cos(turn)])
        slack = (cell - math.hypot(1, deck.aspect)) * cw * 0.4
        centre = origin + np.array([c, r]) * step + rl.uniform(-slack, slack, 2)
        poses.append(Pose(centre, up, cw, ch))
    for k in range(min(touching, len(cards) // 2)):
        # slide the second card of a pair until the two overlap by a sliver
        a, b = poses[2 * k], poses[2 * k + 1]
        poses[2 * k + 1] = Pose(a.centre + a.right * cw * 1.0, a.up.copy(), cw, ch)
        del b
    for i, pose in zip(order, poses[:len(cards)]):
        items.append(Item(pose, cards[int(i)], "card", shade=float(np.exp(rl.normal(0, 0.03)))))
    for pose in poses[len(cards):]:
        _, sprite = foreign_card(rl, world.sprite_ppm)
        fw, fh = sprite.size_mm
        k = min(1.0, step * 0.85 / math.hypot(fw, fh))   # shrunk only if it would not fit its place
        items.append(Item(Pose(pose.centre, pose.up, fw * k, fh * k), what="unknown", sprite=sprite))
    name = f"deck_{int(seed):08d}"
    truth, ids = truth_of(world, items, f"{name}.jpg")
    frame = draw(world, items, ids, rngs["sensor"])
    meta = {"seed": int(seed), "style": deck.style, "aspect": deck.aspect, "size": list(size),
            "card_mm": list(world.card_mm), "markers": markers, "light": light.name if light else tier,
            "camera": {"tilt": world.camera.tilt, "roll": world.camera.roll},
            "visibility": {str(k): round(v, 3) for k, v in frame.visibility.items()}}
    return Scene(frame.image, truth, frame.label, frame.jpeg, meta)


# --------------------------------------------------------------------------- games with that deck

def render_deck_scene(seed: int, deck: DeckLook, tier: str = "hard", light: LightSetup | None = None,
                      size: tuple[int, int] | None = None) -> Scene:
    """A game scene of `tier` drawn with this deck under this light (camera, table, state at random)."""
    t = _lit(tier, light)
    rngs = _rngs(seed, 17 + list(TIERS).index(tier))
    if size is None:
        size = tuple(t.resolutions[int(rngs["camera"].integers(len(t.resolutions)))])
    world = make_world(t, rngs, deck.style, size)
    _use_deck(world, deck)
    rs, rl = rngs["state"], rngs["layout"]
    cw, ch = world.card_mm
    capacity = 0.25 * abs(cv2.contourArea(world.region.astype(np.float32))) / (cw * ch)
    game = pooled_game(int(rs.integers(2, 6)), int(rs.integers(POOL_SIZE)))
    n_distract = int(rs.integers(t.distractors[0], t.distractors[1] + 1))
    fan = int(rs.integers(3, 9)) if rs.uniform() < t.fan_chance else 0
    sizes = [sum(len(c) for c in f) for f in game.frames]
    for attempt in range(4):
        fitting = [i for i, n in enumerate(sizes) if n <= capacity] or [0]
        state = game.frames[int(rs.choice(fitting))]
        layout = lay_out(world, state, rl, fan=fan, distractors=n_distract)
        if not layout.dropped:
            break
        capacity *= 0.7
    name = f"{tier}_deck_{int(seed):08d}"
    truth, ids = truth_of(world, layout.items, f"{name}.jpg")
    frame = draw(world, layout.items, ids, rngs["sensor"])
    # (the truth of a game scene of any deck is what `render_scene`'s is: the cards one can
    # judge in the picture, each with how much of it is in view)
    drawn = len(truth["cards"])
    truth, label, gone = visible_truth(truth, frame)
    meta = {"seed": int(seed), "tier": tier, "style": deck.style, "aspect": deck.aspect,
            "light": light.name if light else tier, "size": list(size),
            "visibility": visibility_of(frame, drawn, gone)}
    return Scene(frame.image, truth, label, frame.jpeg, meta)


def whole_deck(deck: Deck | None = None) -> list[Card]:
    return (deck or load_deck()).cards()
