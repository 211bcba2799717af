"""Finding cards on rendered tables: outlines land on the true corners; nothing else is a card."""
import cv2
import numpy as np
import pytest

from companion.vision.find import find_cards
from companion.vision.outline import CardOutline, order_corners, polygon_iou


def _corner_error(found: CardOutline, truth_corners) -> float:
    """Largest distance from a true corner to the nearest found corner, in card short sides."""
    t = np.array(truth_corners, float)
    d = np.linalg.norm(t[:, None] - found.corners[None], axis=2).min(axis=1)
    return float(d.max() / found.short_side)


def _match(found, truth_cards):
    out = {}
    for j, t in enumerate(truth_cards):
        ious = [polygon_iou(f.corners, np.array(t["corners"], float)) for f in found]
        if ious and max(ious) > 0.5:
            out[j] = found[int(np.argmax(ious))]
    return out


def test_snake_and_lone_cards_are_found_precisely(small_scene):
    found = find_cards(small_scene.image)
    truth = small_scene.truth["cards"]
    m = _match(found, truth)
    assert len(m) == len(truth), f"found {len(m)} of {len(truth)} cards"
    assert len(found) == len(truth)
    for j, f in m.items():
        assert _corner_error(f, truth[j]["corners"]) < 0.06


@pytest.mark.parametrize("seed", [21, 22])
def test_isolated_cards_under_perspective(seed):
    from companion.synth.scene import render_scene
    scene = render_scene(seed, tier="medium", style="painted", size=(800, 600),
                         table=[["M-red-blue"], ["T-green"], ["H-yellow"]])
    found = find_cards(scene.image)
    m = _match(found, scene.truth["cards"])
    faces = [j for j, t in enumerate(scene.truth["cards"]) if t["kind"] not in ("unknown", "back")]
    assert all(j in m for j in faces)


def test_plain_table_has_no_cards():
    rng = np.random.default_rng(3)
    table = np.full((480, 640, 3), (60, 90, 140), np.uint8)
    table = np.clip(table + rng.normal(0, 6, table.shape), 0, 255).astype(np.uint8)
    assert find_cards(table) == []


def test_order_corners_is_clockwise_from_top_left():
    q = order_corners(np.array([[10, 50], [50, 10], [90, 50], [50, 90]], float)[::-1])
    assert q[0].tolist() in ([10, 50], [50, 10])
    a, b = q[1] - q[0], q[2] - q[1]
    cross = a[0] * b[1] - a[1] * b[0]
    assert cross > 0  # clockwise on screen, where y points down


def _rect(x, y, w, h):
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], float)


def test_pieces_cut_from_cards_do_not_set_the_card_size():
    from companion.vision.suppress import size_prior
    from companion.vision.sizes import CardSizes
    cards = [(_rect(100 * k, 0, 60, 90), 0.9) for k in range(3)]
    pieces = [(_rect(100 * k + 5, 5, 20, 30), 0.95) for k in range(3) for _ in range(3)]
    scored = dict((id(q), s) for q, s in size_prior(pieces + cards, CardSizes.from_cards([q for q, _ in cards])))
    assert all(scored[id(q)] == pytest.approx(0.9) for q, _ in cards)
    assert all(scored[id(q)] < 0.5 for q, _ in pieces)


def test_a_card_as_small_as_the_far_card_found_alone_is_not_doubted_for_its_size():
    # a slanted view with three cards found alone (too few for a plane), two near ones and a
    # far one half their area: the one size is the near cards'
    from companion.vision.suppress import size_prior
    from companion.vision.sizes import CardSizes
    alone = [(_rect(0, 400, 88, 88), 0.9), (_rect(100, 400, 88, 90), 0.9), (_rect(300, 0, 62, 64), 0.9)]
    sizes = CardSizes.from_cards([q for q, _ in alone])
    far_card = (_rect(400, 0, 58, 58), 0.9)          # cut from a row beside the far card
    across = (_rect(400, 29, 62, 96), 0.5)           # a cut across one and a half such cards
    piece = (_rect(400, 0, 20, 30), 0.95)            # the paper beside a body
    pair = (_rect(200, 400, 88, 176), 0.9)           # two near cards end to end
    scored = dict((id(q), s) for q, s in size_prior(alone + [far_card, across, piece, pair], sizes))
    assert scored[id(far_card[0])] > scored[id(across[0])]
    assert scored[id(piece[0])] < 0.5
    # no card larger than the near ones was found alone: a pair is doubted as before
    assert scored[id(pair[0])] < 0.9 * 0.7
    assert all(scored[id(q)] == pytest.approx(0.9) for q, _ in alone)


def test_a_well_fitting_card_replaces_the_parts_found_inside_it():
    from companion.vision.suppress import suppress
    card = (_rect(0, 0, 60, 90), 0.85)
    parts = [(_rect(3, 3, 20, 80), 0.95), (_rect(36, 3, 20, 80), 0.93)]
    kept = suppress(parts + [card])
    assert len(kept) == 1 and kept[0][0] is card[0]
    # a poor fit does not: its parts stay
    kept = suppress(parts + [(card[0], 0.6)])
    assert {id(q) for q, _ in kept} == {id(q) for q, _ in parts}


def test_a_row_is_explained_only_when_every_card_in_it_was_found():
    from companion.vision.cut import _explained
    row = np.round(_rect(10, 20, 180, 90)).astype(np.int32).reshape(-1, 1, 2)  # three 60x90 cards end to end
    box = (10, 20, 181, 91)
    cards = [_rect(10 + 60 * k, 20, 60, 90) for k in range(3)]
    assert _explained(row, box, cards, 0.5 * 60 * 90)
    assert not _explained(row, box, cards[:2], 0.5 * 60 * 90)   # the third card is still to be cut out
    assert not _explained(row, box, [], 0.5 * 60 * 90)


def test_refining_moves_each_side_onto_the_edge_at_full_resolution():
    import cv2
    from companion.vision.refine import refine_corners
    gray = np.full((300, 400), 60, np.uint8)
    truth = np.array([[100, 80], [260, 90], [250, 220], [95, 205]], np.float64)
    cv2.fillConvexPoly(gray, np.round(truth).astype(np.int32), 200)
    rough = CardOutline(truth + [[2.5, -2], [-1.5, 2.5], [2, -2.5], [-2, 2]])
    refined = refine_corners(gray, rough).corners
    assert np.abs(refined - truth).max() < 1.5 < np.abs(rough.corners - truth).max()
    near_border = CardOutline(truth - [94, 0])   # a side too near the border keeps its place
    assert np.all(np.isfinite(refine_corners(gray, near_border).corners))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_card_between_two_neighbours_stands_out_enough_to_be_found_alone(seed):
    """In a row, a card meets its neighbours' paper across both short sides: only its long
    sides show the table. That is enough to be a card alone; one side is not."""
    from companion.vision.regions import ALONE_CONTRAST
    from companion.vision.quads import edge_contrast
    rng = np.random.default_rng(seed)
    table, paper = (110, 128, 128), (225, 130, 140)
    lab = np.empty((300, 500, 3), np.float64)
    lab[:] = table
    lab[120:180, 40:460] = paper                          # a row of paper: the card and its neighbours
    lab = np.clip(lab + rng.normal(0, 3, lab.shape), 0, 255).astype(np.uint8)
    card = np.array([[202, 120], [298, 120], [298, 180], [202, 180]], float)
    assert edge_contrast(lab, card, 14.0) >= ALONE_CONTRAST
    lab[60:120, 40:460] = lab[120:180, 40:460]            # paper above it too: one side left
    assert edge_contrast(lab, card, 14.0) < ALONE_CONTRAST


def _slanted_card(img, centre, angle, shear, size=(70, 112)):
    """A card seen steeply from one side: a parallelogram whose sides meet at 90 - shear degrees,
    cream paper, a dark rim and a coloured body along it; returns its corners."""
    w, h = size
    a, s = np.radians(angle), np.tan(np.radians(shear))
    local = np.array([[-w / 2 - s * h / 2, -h / 2], [w / 2 - s * h / 2, -h / 2],
                      [w / 2 + s * h / 2, h / 2], [-w / 2 + s * h / 2, h / 2]])
    turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    corners = local @ turn.T + centre
    cv2.fillConvexPoly(img, np.round(corners).astype(np.int32), (170, 215, 230), cv2.LINE_AA)
    cv2.polylines(img, [np.round(corners).astype(np.int32)], True, (60, 80, 90), 2, cv2.LINE_AA)
    top, bottom = (corners[0] + corners[1]) / 2, (corners[2] + corners[3]) / 2
    cv2.line(img, tuple(np.round(top + 0.2 * (bottom - top)).astype(int)),
             tuple(np.round(top + 0.8 * (bottom - top)).astype(int)), (160, 60, 120), 14, cv2.LINE_AA)
    return corners


@pytest.mark.parametrize("seed", range(4))
def test_cards_seen_at_a_slant_are_found(seed):
    """Under a steep view a card is a parallelogram that its least rectangle fits loosely; it is
    still one solid card (three lone ones here, sheared 25 to 35 degrees)."""
    rng = np.random.default_rng(seed)
    img = np.full((480, 640, 3), (30, 50, 80), np.uint8)
    cards = [_slanted_card(img, np.array([x, 240.0]), rng.uniform(-30, 30), rng.uniform(25, 35) * sign)
             for x, sign in ((130, 1), (320, -1), (510, 1))]
    img = np.clip(img + rng.normal(0, 2.0, img.shape), 0, 255).astype(np.uint8)
    found = find_cards(img)
    for corners in cards:
        assert max((polygon_iou(f.corners, corners) for f in found), default=0.0) > 0.85
    assert len(found) == len(cards)



def test_a_part_of_a_picture_is_searched_as_the_whole_picture_would_be(analyzer):
    """A tracker reads only the part of a frame around a change: a card in it must come out
    as the whole frame gives it, the part searched at the whole's scale and with its sizes
    (`picture`; searched as a picture of its own, half the cards lay 6 px or more off)."""
    from companion.synth.scene import render_scene
    from companion.vision.find import searched_copy
    table = [["H-red", "M-red-blue", "M-blue-green", "T-green"], ["M-yellow-purple"]]
    errors = []
    for seed in range(1, 9):
        image = render_scene(seed, tier="medium", size=(1920, 1080), table=table).image
        for card in find_cards(image, paper=analyzer.paper)[:3]:
            x, y = card.corners.mean(axis=0).astype(int)
            x0, y0 = max(0, x - 350), max(0, y - 350)
            part = np.ascontiguousarray(image[y0:y + 350, x0:x + 350])
            assert searched_copy(part, image.shape)[1] == searched_copy(image)[1] == 0.5
            found = find_cards(part, paper=analyzer.paper, picture=image.shape[:2])
            errors.append(min((float(np.abs(f.corners + (x0, y0) - card.corners).max()) for f in found),
                              default=np.inf))
    assert len(errors) == 24
    assert np.median(errors) <= 5.0, sorted(errors)


def test_a_part_too_small_to_hold_a_card_at_the_whole_picture_s_scale_holds_none(analyzer):
    image = np.full((1080, 1920, 3), 120, np.uint8)
    part = np.ascontiguousarray(image[500:597, 800:929])     # 48 px high as searched
    assert find_cards(part, paper=analyzer.paper, picture=image.shape[:2]) == []


def test_a_long_outline_pieces_lie_in_is_two_cards_unless_it_has_one_card_s_area():
    """Cut from a region, pieces lying in a long outline say it is two cards end to end; but a
    card seen at a slant across its width looks as long and has one card's area where it lies."""
    from companion.vision.suppress import without_split_pairs
    from companion.vision.sizes import CardSizes

    sizes = CardSizes(40.0, 60.0)                       # 2,400 px a card
    slanted = _rect(100, 100, 27, 61)                   # 2.3 times longer than wide, 1,647 px
    pair = _rect(300, 100, 40, 120)                     # two cards end to end, 4,800 px
    plain = _rect(500, 100, 40, 60)
    kept = [(slanted, 0.9), (pair, 0.9), (plain, 0.9)]
    pieces = [_rect(105, 120, 15, 15), _rect(305, 110, 30, 40), _rect(305, 160, 30, 40)]
    left = [q for q, _ in without_split_pairs(kept, pieces, sizes)]
    assert [q is slanted for q in left] == [True, False] and left[1] is plain
    # without the cards' size nothing says how large a card is: every long outline pieces lie in goes
    left = [q for q, _ in without_split_pairs(kept, pieces, None)]
    assert len(left) == 1 and left[0] is plain
