"""The printable marker mat: write it, and find it in a photo to fix the table plane and scale.

Four ArUco markers at known places on an A4 sheet (the layout lives with the
renderer, `companion.synth.deck_layout`, so drawn and detected mats agree).
When a photo shows at least one marker, every detected marker corner is
matched to its millimetre position on the sheet and one homography maps
the picture to the table plane: card sizes and the aspect ratio are then
measured in millimetres, free of the camera's perspective.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.synth.deck_layout import MARKER_DICT, MAT_MM, mat_image, marker_positions_mm


@dataclass(frozen=True)
class TablePlane:
    to_mm: np.ndarray          # 3x3 homography: image pixels -> mat millimetres
    markers: int               # how many markers were seen
    mat_outline: np.ndarray    # (4, 2) the sheet's corners in image pixels (to ignore it when finding cards)

    def mm(self, points: np.ndarray) -> np.ndarray:
        pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.to_mm).reshape(-1, 2)


def find_plane(image: np.ndarray) -> TablePlane | None:
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, MARKER_DICT))
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(image)
    if ids is None:
        return None
    known = marker_positions_mm()
    src, dst = [], []
    for quad, i in zip(corners, ids.ravel()):
        if int(i) in known:
            src.append(quad.reshape(4, 2))
            dst.append(known[int(i)])
    if not src:
        return None
    H, _ = cv2.findHomography(np.concatenate(src), np.concatenate(dst), 0)
    if H is None:
        return None
    W, Hh = MAT_MM
    sheet = np.array([[0, 0], [W, 0], [W, Hh], [0, Hh]], np.float64).reshape(-1, 1, 2)
    outline = cv2.perspectiveTransform(sheet, np.linalg.inv(H)).reshape(-1, 2)
    return TablePlane(H, len(src), outline)


def write_mat(path: str | Path, dpi: int = 200) -> Path:
    """Write the mat as PNG (any other suffix but .pdf) or as a one-page A4 PDF."""
    named_a_folder = str(path).endswith(("/", "\\"))      # (Path drops the slash)
    path = Path(path)
    if path.is_dir() or named_a_folder:
        raise ValueError(f"{path}: a folder; --out names the mat's file (.png or .pdf)")
    px_per_mm = dpi / 25.4
    img = mat_image(px_per_mm)
    if path.suffix.lower() == ".pdf":
        path.write_bytes(_pdf_page(img, MAT_MM))
    else:
        if not path.suffix:
            path = path.with_suffix(".png")
        try:
            ok, buf = cv2.imencode(path.suffix, img)
        except cv2.error:
            ok = False
        if not ok:
            raise ValueError(f"{path}: cannot write pictures of type {path.suffix!r}; use .png or .pdf")
        path.write_bytes(buf.tobytes())
    return path


def _pdf_page(img: np.ndarray, size_mm: tuple[float, float]) -> bytes:
    """A minimal PDF: one page of exactly size_mm holding the picture (JPEG-compressed)."""
    ok, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
    if not ok:
        raise ValueError("cannot encode the mat")
    data = jpg.tobytes()
    w_pt, h_pt = (s / 25.4 * 72.0 for s in size_mm)
    h, w = img.shape[:2]
    content = f"q {w_pt:.2f} 0 0 {h_pt:.2f} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w_pt:.2f} {h_pt:.2f}] "
         f"/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>").encode(),
        (f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceRGB "
         f"/BitsPerComponent 8 /Filter /DCTDecode /Length {len(data)} >>\nstream\n").encode() + data + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /ID [<{zlib.crc32(data):08x}> <{zlib.crc32(data):08x}>] >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
