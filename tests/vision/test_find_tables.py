"""Cards the table's own colours hide: a patterned cloth sharing the paper's colour, a
cloth barely darker than the paper, and touching cards whose only parting is a seam."""
import cv2
import numpy as np
import pytest

from companion.vision.find import find_cards
from companion.vision.split import peel_strip
from companion.vision.sizes import CardSizes
from companion.vision.outline import polygon_iou

CREAM = (200, 226, 238)       # BGR paper
WHITE = (232, 240, 246)       # the white of a cloth, 11 units of Lab from the paper


def _card_corners(centre, size, angle_deg):
    return cv2.boxPoints((centre, size, angle_deg)).astype(np.float64)


def _draw_card(img, corners, body=(40, 60, 200), paper=CREAM):
    """Paper to the edge with a body running from one short edge to the other."""
    cv2.fillConvexPoly(img, np.round(corners).astype(np.int32), paper, cv2.LINE_AA)
    e = np.linalg.norm(np.roll(corners, -1, 0) - corners, axis=1)
    i = int(np.argmin(e))   # a short edge: corners i, i+1; the other short edge: i+2, i+3
    a = (corners[i] + corners[(i + 1) % 4]) / 2
    b = (corners[(i + 2) % 4] + corners[(i + 3) % 4]) / 2
    t = np.linspace(0, 1, 30)[:, None]
    n = np.array([-(b - a)[1], (b - a)[0]]) / np.linalg.norm(b - a)
    path = a + t * (b - a) + np.sin(t * 2 * np.pi) * 0.12 * e.min() * n
    art = img.copy()
    cv2.polylines(art, [np.round(path).astype(np.int32)], False, (30, 30, 30), int(0.3 * e.min()), cv2.LINE_AA)
    cv2.polylines(art, [np.round(path).astype(np.int32)], False, body, int(0.24 * e.min()), cv2.LINE_AA)
    face = np.zeros(img.shape[:2], np.uint8)
    cv2.fillConvexPoly(face, np.round(corners).astype(np.int32), 1)
    img[face > 0] = art[face > 0]     # the art is printed on the card, not past its edge


def _noisy(img, seed, sigma=2.0):
    rng = np.random.default_rng(seed)
    return np.clip(img + rng.normal(0, sigma, img.shape), 0, 255).astype(np.uint8)


def _found(found, corners):
    return max((polygon_iou(f.corners, corners) for f in found), default=0.0)


@pytest.mark.parametrize("seed", [1, 2])
def test_cream_cards_on_a_gingham_whose_white_is_nearly_their_colour(seed):
    rng = np.random.default_rng(seed)
    h, w, period = 540, 960, 44
    y, x = np.mgrid[:h, :w]
    red = (np.array((40, 40, 190)) + rng.integers(-15, 15, 3)).astype(np.float64)
    mix = (0.5 * ((x // (period // 2)) % 2) + 0.5 * ((y // (period // 2)) % 2))[..., None]
    img = (np.array(WHITE, np.float64) * (1 - mix) + red * mix).astype(np.uint8)
    cards = [_card_corners((300, 270), (110, 170), 20 + 10 * seed),
             _card_corners((640, 300), (110, 170), -35),
             _card_corners((820, 150), (110, 170), 80)]
    for c in cards:   # (a red body on the red cloth would cut the card in two: a known gap)
        _draw_card(img, c, body=(60, 160, 60))
    found = find_cards(_noisy(img, seed))
    assert all(_found(found, c) > 0.8 for c in cards), [round(_found(found, c), 2) for c in cards]
    assert len(found) == len(cards)


def test_paper_barely_lighter_than_a_smooth_cloth_is_found():
    # 13 units of (lightness-weighted) Lab distance from the paper: under any fixed
    # threshold that the noise of a patterned cloth allows, not under this cloth's noise
    img = np.full((480, 640, 3), (178, 204, 218), np.uint8)
    light = np.linspace(0.97, 1.03, 640)[None, :, None]     # a gentle fall of light
    img = np.clip(img * light, 0, 255).astype(np.uint8)
    cards = [_card_corners((200, 240), (100, 150), 15), _card_corners((450, 220), (100, 150), -60)]
    for c in cards:
        _draw_card(img, c, body=(160, 60, 120))
    found = find_cards(_noisy(img, 5, 1.5))
    assert all(_found(found, c) > 0.8 for c in cards), [round(_found(found, c), 2) for c in cards]


@pytest.mark.parametrize("seed", [1, 2])
def test_cream_cards_on_a_white_table_show_less_than_a_clear_step_and_are_found(seed):
    """Cream paper on a smooth white table: 11 units of Lab apart, under the step that
    proves a card on a busy table (14), but above what this table's own noise makes;
    the map cut at that noise is what finds them, and the step it was cut at is what
    their outline must show."""
    rng = np.random.default_rng(seed)
    grain = cv2.GaussianBlur(rng.standard_normal((480, 640)).astype(np.float32), (0, 0), 0.8)
    img = np.full((480, 640, 3), (240, 244, 246), np.float32) + (2.0 / grain.std() * grain)[..., None]
    img = np.clip(img, 0, 255).astype(np.uint8)
    cards = [_card_corners((150, 160), (100, 150), 10), _card_corners((330, 330), (100, 150), -35),
             _card_corners((500, 150), (100, 150), 70)]
    for c in cards:
        _draw_card(img, c, body=(60, 160, 40), paper=(218, 234, 242))
    found = find_cards(_noisy(img, seed, 1.5))
    assert all(_found(found, c) > 0.85 for c in cards), [round(_found(found, c), 2) for c in cards]
    assert len(found) == len(cards)


def _strip(angles, short=60.0, long_=96.0):
    """Cards end to end, each turned by its angle at the joint: the corners of each card."""
    cards, start, = [], np.array([80.0, 200.0])
    for angle in angles:
        u = np.array([np.cos(np.radians(angle)), np.sin(np.radians(angle))])
        n = np.array([-u[1], u[0]])
        cards.append(np.array([start - n * short / 2, start + n * short / 2,
                               start + u * long_ + n * short / 2, start + u * long_ - n * short / 2]))
        start = start + u * long_
    return cards


@pytest.mark.parametrize("angles", [(0, 0, 0, 0), (0, 12, 24, 24)])
def test_touching_cards_part_at_their_seams(angles):
    """No notch in the region's outline: the seams and the card size alone say where to cut."""
    cards = _strip(angles)
    region = np.zeros((400, 640), np.uint8)
    gray = np.full((400, 640), 180, np.uint8)
    for c in cards:
        cv2.fillConvexPoly(region, np.round(c).astype(np.int32), 255)
        cv2.fillConvexPoly(gray, np.round(c).astype(np.int32), 230)
    for c in cards:   # each card's own rim: a thin darker line where it meets the next
        cv2.polylines(gray, [np.round(c).astype(np.int32)], True, 150, 1)
    region = cv2.morphologyEx(region, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    contour = max(cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0], key=cv2.contourArea)
    gradient = (cv2.Sobel(gray, cv2.CV_32F, 1, 0), cv2.Sobel(gray, cv2.CV_32F, 0, 1))
    # the lone cards of the picture said 60 x 90: a little off the true 96
    pieces = peel_strip(contour, gradient, CardSizes(60.0, 90.0))
    assert len(pieces) == len(cards)
    for c in cards:
        assert max(polygon_iou(q, c) for q, _ in pieces) > 0.8


def _peeled(cards, region, size=(400, 640)):
    """`peel_strip` on a region, the cards' rims drawn on a plain picture for the seams."""
    gray = np.full(size, 180, np.uint8)
    for c in cards:
        cv2.fillConvexPoly(gray, np.round(c).astype(np.int32), 230)
    for c in cards:
        cv2.polylines(gray, [np.round(c).astype(np.int32)], True, 150, 1)
    contour = max(cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0], key=cv2.contourArea)
    gradient = (cv2.Sobel(gray, cv2.CV_32F, 1, 0), cv2.Sobel(gray, cv2.CV_32F, 0, 1))
    return peel_strip(contour, gradient, CardSizes(60.0, 96.0))


def test_a_row_is_peeled_where_the_map_holds_only_a_band_of_some_cards():
    """Paper of nearly the table's colour: the map holds every other card only along its body."""
    cards = _strip((0, 0, 0, 0))
    region = np.zeros((400, 640), np.uint8)
    for k, c in enumerate(cards):
        if k % 2 == 0:
            cv2.fillConvexPoly(region, np.round(c).astype(np.int32), 255)
        else:   # a band 0.45 of the card's width down its middle
            x0, y0 = c.min(axis=0)
            x1, y1 = c.max(axis=0)
            band = 0.45 * (y1 - y0) / 2
            cy = (y0 + y1) / 2
            cv2.rectangle(region, (int(x0), int(cy - band)), (int(x1), int(cy + band)), 255, -1)
    pieces = _peeled(cards, region)
    assert len(pieces) == len(cards)
    for c in cards:
        assert max(polygon_iou(q, c) for q, _ in pieces) > 0.8


def test_a_row_a_little_wider_than_its_cards_is_peeled():
    """A map's region spreads past the paper (blur, a soft shadow): 1.3 card widths across."""
    cards = _strip((0, 0, 0, 0))
    region = np.zeros((400, 640), np.uint8)
    for c in cards:
        cv2.fillConvexPoly(region, np.round(c).astype(np.int32), 255)
    region = cv2.dilate(region, np.ones((19, 1), np.uint8))
    pieces = _peeled(cards, region)
    assert len(pieces) == len(cards)
    for c in cards:
        assert max(polygon_iou(q, c) for q, _ in pieces) > 0.8


def test_a_region_wider_than_a_card_is_not_peeled():
    region = np.zeros((300, 400), np.uint8)
    cv2.rectangle(region, (50, 50), (350, 250), 255, -1)
    contour = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0][0]
    flat = np.zeros((300, 400), np.float32)
    assert peel_strip(contour, (flat, flat), CardSizes(60.0, 96.0)) == []


def _rounded_card(mask, x, y, w, h, r):
    cv2.rectangle(mask, (x + r, y), (x + w - r, y + h), 255, -1)
    cv2.rectangle(mask, (x, y + r), (x + w, y + h - r), 255, -1)
    for cx, cy in ((x + r, y + r), (x + w - r, y + r), (x + r, y + h - r), (x + w - r, y + h - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1)


def test_a_piece_of_two_square_cards_is_not_taken_for_one_when_the_card_size_is_known():
    """Two nearly square cards touching make a clean 1:2 outline, which a 45-degree view
    of one long card could also show; the size of the cards found alone tells them apart."""
    from companion.vision.split import split_blob
    mask = np.zeros((200, 320), np.uint8)
    for k in range(3):
        _rounded_card(mask, 40 + 64 * k, 60, 64, 60, 5)
    contour = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0][0]
    card = 64 * 60

    def largest(pieces):
        return max(abs(cv2.contourArea(q.astype(np.float32))) for q, _ in pieces) / card
    unsized = split_blob(contour, 0.0, 0.0, 1.0, 1.6)
    assert largest(unsized) > 1.8            # two cards passed for one
    sized = split_blob(contour, 60.0, 64.0, 1.0, 1.6)
    assert len(sized) == 3 and largest(sized) < 1.2


def test_cards_on_a_pale_table_of_their_colour_stand_out_by_their_rims():
    """Cream cards on cream laminate: no colour tells them from the table, only the thin
    printed rim, a few units of lightness deep, where a bar set by the bright light alone
    saw nothing."""
    from companion.vision.maps import edge_regions, rim_edges, table_gradient
    rng = np.random.default_rng(3)
    table = (204, 226, 236)
    img = np.full((480, 640, 3), table, np.uint8)
    cards = [_card_corners((200, 240), (100, 150), 15), _card_corners((450, 220), (100, 150), -60)]
    for c in cards:
        _draw_card(img, c, body=(160, 60, 120))
        cv2.polylines(img, [np.round(c).astype(np.int32)], True, (170, 190, 200), 2, cv2.LINE_AA)
    img = np.clip(img + rng.normal(0, 1.5, img.shape), 0, 255).astype(np.uint8)
    L = cv2.GaussianBlur(cv2.cvtColor(img, cv2.COLOR_BGR2Lab), (3, 3), 0)[..., 0]
    assert table_gradient(L) < 40          # the table itself is smooth
    regions = edge_regions(rim_edges(L), 5)
    for c in cards:
        card = np.zeros(L.shape, np.uint8)
        cv2.fillConvexPoly(card, np.round(c).astype(np.int32), 1)
        covered = (regions > 0)[card > 0].mean()
        assert covered > 0.9, covered


def test_a_bump_on_a_card_s_outline_seldom_costs_the_card():
    """A blob stuck to a side (a strand of table texture caught on the rim) can take a
    corner of the hull's four-cornered polygon, which then fits nothing; the region's
    least rectangle, its sides refitted, is the card.  Twelve placements of one bump, 8
    px across and 2 px out: found in 8 with the polygon alone, 11 with the rectangle
    (a bump beside a corner still spoils the outline)."""
    found_in = 0
    for side in range(4):
        for at in (0.5, 0.7, 0.85):
            img = np.full((480, 640, 3), (60, 70, 50), np.uint8)
            card = _card_corners((320, 240), (110, 170), 25)
            cv2.fillConvexPoly(img, np.round(card).astype(np.int32), CREAM, cv2.LINE_AA)
            along = card[(side + 1) % 4] - card[side]
            out = np.array([along[1], -along[0]]) / np.linalg.norm(along)
            where = card[side] + at * along
            if out @ (where - card.mean(axis=0)) < 0:
                out = -out
            cv2.circle(img, tuple(int(v) for v in np.round(where + 2 * out)), 6, CREAM, -1, cv2.LINE_AA)
            found_in += _found(find_cards(_noisy(img, 1)), card) > 0.9
    assert found_in >= 11, found_in


def test_a_row_of_touching_cream_cards_on_a_cream_table_is_cut_at_its_rims():
    """Cream on cream: only the edge map holds the row, and no colour differs across the
    seams or the row's sides, so each card cut from it is proven by the rim along its
    outline."""
    table = (204, 226, 236)
    img = np.full((540, 960, 3), table, np.uint8)
    size = (100, 150)
    row = [_card_corners((250 + 150 * k, 330), (size[1], size[0]), 0) for k in range(4)]
    alone = [_card_corners((150, 110), size, 10), _card_corners((500, 110), size, -20),
             _card_corners((820, 130), size, 30)]
    for c in row + alone:
        _draw_card(img, c, body=(160, 60, 120))
        cv2.polylines(img, [np.round(c).astype(np.int32)], True, (170, 190, 200), 2, cv2.LINE_AA)
    found = find_cards(_noisy(img, 5, 1.5))
    assert all(_found(found, c) > 0.75 for c in row), [round(_found(found, c), 2) for c in row]
    assert len(found) == len(row + alone)


def test_the_rim_is_what_proves_a_card_cut_from_the_edges():
    from companion.vision.quads import rim_support
    edges = np.zeros((300, 400), np.uint8)
    card = _card_corners((200, 150), (150, 100), 0)
    cv2.polylines(edges, [np.round(card).astype(np.int32)], True, 255, 1)
    assert rim_support(edges, card) > 0.9
    assert rim_support(edges, card + (75, 0)) < 0.6   # half a card off: only its long sides' halves


def _region(corners):
    return np.round(corners).astype(np.int32).reshape(-1, 1, 2)


def test_pieces_of_body_along_a_row_do_not_set_the_card_size():
    """On a table of the paper's colour the colour maps see only the bodies: a piece of
    body between two bends, a third of a card wide, is the only thing found alone.  It
    lies along the middle of its row, which the edge map holds by the rims, and the rows'
    width is the card's short side."""
    from companion.vision.sizes import card_sizes
    rows = [_region(_card_corners((300, 100 + 200 * k), (600, 100), 0)) for k in range(2)]
    pieces = [_card_corners((150 + 150 * k, 100), (90, 30), 0) for k in range(3)]
    alone, sizes = card_sizes(pieces, rows, 1.2, 1.6)
    assert alone == []
    assert sizes.short == pytest.approx(100, abs=3) and sizes.long == pytest.approx(140, abs=5)
    # a card of the row found alone lies no deeper in it than half its width: it is learnt from
    card = _card_corners((50, 100), (100, 100), 0)
    alone, sizes = card_sizes([card] + pieces[1:], rows, 1.2, 1.6)
    assert len(alone) == 1 and alone[0] is card


def test_cards_found_alone_squeezed_across_their_width_do_not_stretch_the_card_size():
    """Seen along a row running away from the camera, the cards found alone look 1:2; a
    card of the deck is at most 1:1.6, so a row turned the other way is cut at 1:1.6."""
    from companion.vision.sizes import card_sizes
    squeezed = [_card_corners((100 + 150 * k, 100), (50, 100), 0) for k in range(3)]
    alone, sizes = card_sizes(squeezed, [], 1.0, 1.6)
    assert len(alone) == 3
    assert sizes.short == pytest.approx(50, abs=1) and sizes.long == pytest.approx(80, abs=2)


def test_rows_on_a_table_of_the_paper_s_colour_are_cut_at_card_size_not_body_size():
    """Two rows of touching cream cards on cream laminate, nothing alone: what the
    colour maps see are the bodies, in pieces.  The rows are cut into whole cards."""
    table = (204, 226, 236)
    img = np.full((540, 960, 3), table, np.uint8)
    size = (100, 150)
    rows = [_card_corners((210 + 150 * k, 150 + 230 * r), (size[1], size[0]), 0)
            for r in range(2) for k in range(4)]
    for c in rows:
        _draw_card(img, c, body=(60, 160, 40))
        cv2.polylines(img, [np.round(c).astype(np.int32)], True, (170, 190, 200), 2, cv2.LINE_AA)
    found = find_cards(_noisy(img, 7, 1.5))
    assert all(_found(found, c) > 0.85 for c in rows), [round(_found(found, c), 2) for c in rows]
    assert len(found) == len(rows)   # and no piece of body besides


def test_rows_of_cards_smaller_than_the_smallest_looked_for_are_not_cut_into_cards():
    """Cards under the smallest size looked for (a 24 px short side) are not reported alone,
    nor when they touch in rows and are cut apart."""
    img = np.full((480, 640, 3), (120, 124, 128), np.uint8)
    for row, angle in ((0, 0), (1, 8), (2, -6)):
        for k in range(5):
            _draw_card(img, _card_corners((140 + k * 39, 120 + row * 110), (38, 24), angle))
    assert find_cards(_noisy(img, 0)) == []


def test_paper_only_half_rare_on_its_cloth_is_held_by_maps_of_whole_cards():
    """On a cloth whose light squares are of the paper's colour, the border shows that
    colour too and the paper is only half rare (P(table | colour) about 0.15). Maps still
    hold it, the table stays out; but such maps give whole cards only (their large ragged
    regions on real tables would be cut into false cards). Paper the border never shows is
    held by maps whose regions may be cut."""
    from companion.vision.maps import rare_maps
    rarity = np.full((300, 400), 150, np.uint8)       # the cloth: P(table | colour) about 0.4
    half, rare = (slice(100, 190), slice(80, 140)), (slice(100, 190), slice(250, 310))
    rarity[half] = 216
    rarity[rare] = 245
    maps = rare_maps(rarity)
    assert all(m.mask[:, :60].max() == 0 for m in maps)
    holding_half = [m for m in maps if m.mask[half].mean() > 250]
    assert holding_half and all(m.whole_only for m in holding_half)
    assert any(not m.whole_only and m.mask[rare].mean() > 250 for m in maps)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dim_paper_in_a_vignetted_noisy_picture_stands_out_from_the_table_around_it(seed):
    # a lamp pool lights the middle of a grey cloth; in the darker corners lie cards whose
    # paper is lighter than the cloth beside them but darker than the pool, under noise as
    # strong as that step: no distance from the cloth's colours holds their paper
    h, w = 480, 640
    y, x = np.mgrid[:h, :w]
    grey = 112 - 50 * np.clip(np.hypot(x - 330, y - 250) / 330.0, 0, 1) ** 1.5
    img = np.repeat(grey[..., None], 3, axis=2).astype(np.uint8)
    cards = [_card_corners((140, 130), (62, 96), 25 + 10 * seed), _card_corners((520, 360), (62, 96), -30)]
    for c in cards:
        _draw_card(img, c, body=(40, 40, 170), paper=(86, 95, 99))
    found = find_cards(_noisy(cv2.GaussianBlur(img, (0, 0), 1.0), seed, sigma=8.0))
    assert all(_found(found, c) > 0.85 for c in cards), [round(_found(found, c), 2) for c in cards]
    assert len(found) == len(cards)


def test_rectangles_fitted_loosely_find_cards_where_nothing_else_was_found(monkeypatch):
    """On dim, noisy tables the paper's region is ragged: its polygon fits nothing and its least
    rectangle fits it only loosely.  Kept where no other card lies, those rectangles find more
    cards of rendered hard tables (training styles) and no false ones."""
    from companion.synth.scene import render_scene
    import companion.vision.regions as regions

    scenes = [render_scene(seed, tier="hard", size=(800, 450)) for seed in range(100, 160)]

    def tally():
        hits = false = 0
        for scene in scenes:
            truth = [np.array(c["corners"], float) for c in scene.truth["cards"]]
            found = find_cards(scene.image)
            hits += sum(_found(found, c) > 0.8 for c in truth)
            false += sum(max(polygon_iou(f.corners, c) for c in truth) < 0.3 for f in found)
        return hits, false

    with_loose = tally()
    monkeypatch.setattr(regions, "LOOSE_BOXED_SCORE", 2.0)   # no score reaches it
    without = tally()
    assert with_loose[0] > without[0], (with_loose, without)
    assert with_loose[1] <= without[1], (with_loose, without)


def test_two_square_cards_end_to_end_do_not_teach_the_card_size():
    """Nearly square cards: two touching end to end make a fine 1:2 card, found alone as
    readily as a real one.  With twice the others' area, it does not count as a card's size."""
    from companion.vision.sizes import card_sizes
    singles = [_card_corners((100 + 150 * k, 100), (100, 110), 0) for k in range(3)]
    pairs = [_card_corners((100 + 300 * k, 400), (100, 220), 90) for k in range(2)]
    alone, sizes = card_sizes(singles + pairs, [], 1.0, 1.6)
    assert len(alone) == 3 and all(any(a is s for s in singles) for a in alone)
    assert sizes.short == pytest.approx(100, abs=2) and sizes.long == pytest.approx(110, abs=2)
    # a deck of long cards: all alike, each is a card
    longs = [_card_corners((100 + 150 * k, 100), (60, 120), 0) for k in range(4)]
    alone, sizes = card_sizes(longs, [], 1.0, 2.0)
    assert len(alone) == 4 and sizes.long == pytest.approx(120, abs=2)


def test_pairs_of_square_cards_end_to_end_are_cut_in_two():
    """Three nearly square cards alone and three pairs of them touching end to end, on a
    pale table: every card is found by itself, none as half of a 1:2 card."""
    img = np.full((600, 960, 3), (198, 204, 208), np.uint8)
    size = (100, 110)
    cards = [_card_corners((150 + 250 * k, 110), size, 0) for k in range(3)]
    for k, angle in enumerate((0, 20, -15)):
        a = np.deg2rad(angle)
        u = np.array([np.cos(a), np.sin(a)])
        centre = np.array([200.0 + 280 * k, 380.0])
        cards += [_card_corners(tuple(centre + s * 0.5 * size[1] * u), (size[1], size[0]), angle) for s in (-1, 1)]
    for c in cards:
        _draw_card(img, c, body=(60, 160, 40))
        cv2.polylines(img, [np.round(c).astype(np.int32)], True, (150, 165, 175), 1, cv2.LINE_AA)
    found = find_cards(_noisy(img, 3, 1.5))
    assert all(_found(found, c) > 0.8 for c in cards), [round(_found(found, c), 2) for c in cards]
    assert len(found) == len(cards)


def test_something_cut_by_the_frame_is_not_a_card():
    """A card half out of view (or a label on a box at the picture's edge) has a straight side
    along the frame whatever it is: it is not reported.  A card whose corner only touches the
    frame still is."""
    img = np.full((480, 720, 3), (120, 124, 128), np.uint8)
    inside = _card_corners((250, 200), (100, 150), 10)
    cut = _card_corners((690, 240), (100, 150), 0)          # its right half out of the picture
    touching = _card_corners((420, 400), (100, 150), 35)
    touching = touching + [0, 479 - touching[:, 1].max()]   # its lowest corner on the bottom row
    for c in (inside, cut, touching):
        _draw_card(img, c)
    found = find_cards(_noisy(img, 6))
    assert _found(found, inside) > 0.85 and _found(found, touching) > 0.8
    assert not any(f.corners[:, 0].max() > 700 for f in found), [f.corners.round() for f in found]


def test_fragments_narrower_than_a_card_do_not_set_a_row_s_width():
    """Nothing found alone: the rows' width is the card's short side.  A patterned cloth
    leaves many slivers in a map beside the few rows, but the rows hold most of its area."""
    from companion.vision.sizes import card_sizes
    rows = [_region(_card_corners((400, 100 + 200 * k), (700, 100), 0)) for k in range(2)]
    slivers = [_region(_card_corners((100 + 60 * k, 500), (40, 25), 0)) for k in range(5)]
    alone, sizes = card_sizes([], rows + slivers, 1.2, 1.6)
    assert alone == []
    assert sizes.short == pytest.approx(100, abs=3)


# rendered hard tables whose surface is a patterned cloth (the test checks it is)
PATTERNED_SEEDS = (0, 6, 8, 17, 25, 30, 36)


def test_a_long_snake_on_a_patterned_cloth_is_cut_at_the_size_the_learnt_map_shows(analyzer):
    """A dotted or striped cloth breaks the edge map into slivers, and no card of a single
    long snake lies alone to tell a card's size: the learnt map's rows tell it.  (Measured
    when written: 82% of these cards found, 56% with the edge map's rows.)"""
    from companion.synth.scene import render_scene
    snake = ["H-red", "M-red-blue", "M-blue-green", "M-green-yellow", "M-yellow-purple",
             "M-purple-orange", "M-orange-red", "M-red-green", "T-green"]
    truth = found_right = 0
    for seed in PATTERNED_SEEDS:
        scene = render_scene(seed, tier="hard", style="retro", size=(1280, 720), table=[snake])
        assert scene.meta["surface"].startswith("pattern")
        img = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
        found = find_cards(img, paper=analyzer.paper)
        cards = [np.array(c["corners"], float) for c in scene.truth["cards"]]
        truth += len(cards)
        found_right += sum(_found(found, c) > 0.6 for c in cards)
    assert found_right >= 0.75 * truth, (found_right, truth)


def test_on_a_rendered_table_two_touching_cards_with_no_card_alone_are_cut_at_their_seam(analyzer, monkeypatch,
                                                                                         development_table):
    """Two middles lie edge to edge on a striped cloth seen at a slant: neither a notch nor
    the size of the cards found alone parts them; their seam does."""
    import companion.vision.cut as cut
    from companion.bench.metrics import match_cards
    scene, image, _ = development_table(11, "hard", 26)
    pair = next(s["cards"] for s in scene.truth["snakes"] if len(s["cards"]) == 2)
    assert set(pair) <= set(match_cards(scene.truth["cards"], analyzer.analyze(image)["cards"]))
    monkeypatch.setattr(cut, "cut_row", lambda *args: [])
    assert not set(pair) & set(match_cards(scene.truth["cards"], analyzer.analyze(image)["cards"]))


def test_on_a_rendered_table_a_row_no_cut_parts_is_cut_to_the_size_of_the_cards_found_alone(analyzer,
                                                                                             monkeypatch):
    """A straight snake of four on a pale laminate, far from a 4K camera: the learnt map
    shows it as one strip with no seam in it, nor a notch; the twenty cards found alone
    elsewhere say how long a card is there."""
    import companion.vision.cut as cut
    from companion.bench.metrics import match_cards
    from companion.bench.run import bench_scene_seed
    from companion.synth.scene import render_scene
    from companion.synth.styles import HELD_OUT_STYLE
    scene = render_scene(bench_scene_seed(3, "hard", 8), tier="hard", style=HELD_OUT_STYLE)   # a development seed
    image = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
    snake = next(s["cards"] for s in scene.truth["snakes"] if len(s["cards"]) == 4 and 0 in s["cards"])
    middles = set(snake[1:])   # the three middles after its head
    assert middles <= set(match_cards(scene.truth["cards"], analyzer.analyze(image)["cards"]))
    monkeypatch.setattr(cut, "split_to_size", lambda *args: [])
    assert not middles & set(match_cards(scene.truth["cards"], analyzer.analyze(image)["cards"]))


def _spotted_card(size):
    """A card's region with spots caught on two corners and two sides, on a 400 px mask."""
    mask = np.zeros((400, 400), np.uint8)
    card = _card_corners((200, 200), size, 20)
    cv2.fillConvexPoly(mask, np.int32(np.round(card)), 255)
    centre = card.mean(axis=0)
    for point in (card[0], card[2], (card[0] + card[1]) / 2, (card[2] + card[3]) / 2):
        x, y = point + 3.0 * (point - centre) / np.linalg.norm(point - centre)
        cv2.circle(mask, (int(round(x)), int(round(y))), 4, 255, -1)
    region = max(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0], key=cv2.contourArea)
    return card, region, mask[..., None]


def test_spots_of_a_cloth_touching_a_card_are_opened_off_its_outline():
    """A card's region with a cloth's spots caught on its sides and corners fits no card shape;
    opened by a disc wider than a spot, it is the card again."""
    from companion.vision.regions import _best_fit, _without_bumps
    card, region, _ = _spotted_card((60, 96))
    quad, score = _best_fit(region, 1.0, 1.6)
    assert quad is None or polygon_iou(quad, card) < 0.9     # the spots spoil the fit
    quad, score = _best_fit(_without_bumps(region, 60.0), 1.0, 1.6)
    assert score > 0 and polygon_iou(quad, card) > 0.9


def test_a_region_is_opened_only_when_what_it_must_leave_could_be_one_card(monkeypatch):
    """The opening is a card once the cards' size says it has one card's area; a block of four
    spotted cards is not opened at all (on large regions the opening cost a game frame 0.2 s)."""
    import companion.vision.regions as regions
    from companion.vision.regions import Bumpy, opened_cards
    from companion.vision.sizes import CardSizes
    card, region, lab = _spotted_card((60, 96))
    one = Bumpy(region, 60.0, lab, 14.0)
    found = opened_cards([one], CardSizes(60, 96), 40, 1.0, 1.6)
    assert len(found) == 1 and polygon_iou(found[0][0], card) > 0.9
    assert opened_cards([one], CardSizes(0, 0), 40, 1.0, 1.6) == []          # no size known yet
    assert opened_cards([one], CardSizes(30, 48), 40, 1.0, 1.6) == []        # four cards' area
    opened = []
    monkeypatch.setattr(regions, "_without_bumps", lambda *args: opened.append(args))
    _, block, lab = _spotted_card((120, 192))
    assert opened_cards([Bumpy(block, 120.0, lab, 14.0)], CardSizes(60, 96), 40, 1.0, 1.6) == []
    assert not opened


def test_the_bound_on_a_card_s_area_about_a_region_holds_wherever_a_card_in_it_lies():
    """Skipping the opening loses nothing only if no card about the region can be larger."""
    from companion.vision.regions import _largest_card_area
    from companion.vision.sizes import CardSizes
    rng = np.random.default_rng(3)
    for _ in range(50):
        plane = np.array([rng.uniform(-2e-3, 2e-3), rng.uniform(-2e-3, 2e-3), rng.uniform(0.3, 2.5)])
        sizes = CardSizes(50, 80, plane)
        x, y = rng.uniform(0, 800, 2)
        w, h = rng.uniform(20, 600, 2)
        contour = np.int32([[x, y], [x + w, y], [x + w, y + h], [x, y + h]]).reshape(-1, 1, 2)
        bound = _largest_card_area(sizes, contour)
        for px, py in zip(rng.uniform(x, x + w, 40), rng.uniform(y, y + h, 40)):
            short, long_ = sizes.at((px, py))
            assert short * long_ <= bound + 1e-9


def test_on_a_rendered_striped_cloth_cards_with_stripes_caught_on_their_outline_are_found(analyzer, monkeypatch):
    """Three cards of a snake and a card alone on a yellow striped cloth (a development seed): the
    stripes touching them join their regions in every map."""
    import companion.vision.regions as regions
    from companion.bench.metrics import match_cards
    from companion.bench.run import bench_scene_seed
    from companion.synth.scene import render_scene
    from companion.synth.styles import HELD_OUT_STYLE
    scene = render_scene(bench_scene_seed(5, "hard", 4), tier="hard", style=HELD_OUT_STYLE)
    image = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
    faces = {c["id"] for c in scene.truth["cards"] if c["kind"] != "back"}
    assert len(faces) == 4
    assert faces <= set(match_cards(scene.truth["cards"], analyzer.analyze(image)["cards"]))
    monkeypatch.setattr(regions, "_without_bumps", lambda *args: None)
    assert not faces & set(match_cards(scene.truth["cards"], analyzer.analyze(image)["cards"]))
