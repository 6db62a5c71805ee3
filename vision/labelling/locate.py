"""Find the photo a labelling tool's export names, in the folders the user gives.

Label Studio names a photo in many ways (checked against label-studio-sdk 2.1.2's converter and
Label Studio's upload naming): ``/data/local-files/?d=photos/dice_12.jpg`` (Local Files),
``/data/upload/1/3f2a9c1b-dice_12.jpg`` (a browser upload: 8 hex digits and a dash added), a
URL, and in its COCO export a path relative to the export (``images/5d41402a__dice_12.jpg``, a
downloaded copy: 8 hex digits and two underscores added, or
``../../label-studio/media/upload/1/3f2a9c1b-dice_12.jpg``). :class:`PhotoFinder` maps each back
to a photo, most specific first, and never picks between two photos that would both do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from .model import LabelFormatError, find_photos

__all__ = ["PhotoFinder", "reference_parts"]

_TOOL_PREFIX = re.compile(r"^[0-9a-f]{8}(?:-|__)(?=.)")
"""Label Studio's upload prefix (``uuid4()[:8] + "-"``) or its download cache's (``md5[:8] +
"__"``)."""
_URL_PATH = ("/data/", "data/", "/storage-data/", "storage-data/")


def reference_parts(reference: str) -> list[str]:
    """The folders and file name a tool's reference to a photo gives, URL and query removed.

    Example:
        >>> reference_parts("http://localhost:8080/data/local-files/?d=photos/dice%2012.jpg")
        ['photos', 'dice 12.jpg']
        >>> reference_parts("../../media/upload/1/3f2a9c1b-dice_12.jpg")
        ['media', 'upload', '1', '3f2a9c1b-dice_12.jpg']
    """
    parsed = urlparse(reference)
    query = parse_qs(parsed.query, keep_blank_values=True)
    url = bool(parsed.scheme and parsed.netloc) or reference.startswith(_URL_PATH)
    if url and (query.get("d") or query.get("filepath")):  # Local Files; the storage proxy
        path = (query.get("d") or query["filepath"])[-1]  # decoded once, the last one wins
    elif url:
        path = unquote(parsed.path)
    else:
        path = reference.split("?")[0] if "?" in reference and "=" in reference else reference
    return [p for p in re.split(r"[/\\]", path) if p not in {"", ".", ".."}]


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; a name the system refuses (too long) is none."""
    try:
        return path.is_file()
    except OSError:
        return False


def _renamed(names: list[str]) -> bool:
    """Whether the tool renamed the photo (Label Studio's uploads: flat, a prefix added), so that
    the folders it names are not the user's."""
    return len(names) > 1


def _unprefixed(name: str) -> list[str]:
    """``name``, then ``name`` without each tool prefix in turn (a cached copy of an upload
    carries both)."""
    names = [name]
    while _TOOL_PREFIX.match(names[-1]):
        names.append(_TOOL_PREFIX.sub("", names[-1], count=1))
    return names


class PhotoFinder:
    """Find photos named by tools' references under ``roots`` (tried in order).

    For each tail of the reference's path, longest first (``photos/dice_12.jpg``, then
    ``dice_12.jpg``), a photo is looked for as named and without the tool's hash prefix. With
    ``subfolders``, a photo the tool renamed is then looked for under the roots' subfolders by
    file name too (Label Studio's uploads are flat).
    """

    def __init__(self, roots: Sequence[Path], *, subfolders: bool = False) -> None:
        self.roots = list(roots)
        self.subfolders = subfolders
        self._by_name: dict[str, list[tuple[Path, str]]] | None = None
        self._names: dict[Path, str] = {}

    def find(self, reference: str, where: str) -> Path | None:
        """The photo ``reference`` names, or None when there is none.

        Raises:
            LabelFormatError: two photos fit it equally (both are named).
        """
        parts = reference_parts(reference)
        if not parts:
            return None
        names = _unprefixed(parts[-1])
        for start in range(len(parts)):
            for root in self.roots:
                hits = {
                    path: "/".join([*parts[start:-1], n])
                    for n in names
                    if _is_file(path := root.joinpath(*parts[start:-1], n))
                }
                if hits:
                    return self._one(hits, reference, where)
        if self.subfolders and _renamed(names):
            index = self._index()
            hits = {path: name for n in names for path, name in index.get(n, [])}
            return self._one(hits, reference, where) if hits else None
        return None

    def looked_for(self, reference: str) -> str:
        """What :meth:`find` looked for, for an error message."""
        parts = reference_parts(reference)
        if not parts:
            return "no file name in it"
        names = _unprefixed(parts[-1])
        shown = ", ".join(repr(n) for n in dict.fromkeys(["/".join(parts), *names]))
        deep = self.subfolders and _renamed(names)
        roots = " or ".join(str(r) for r in self.roots)
        return f"looked for {shown} in {roots}" + (" and its subfolders" if deep else "")

    def name(self, reference: str, found: Path | None) -> str:
        """The photo's name: its path under the root it was found in; else the reference's
        path when it is a plain relative one or Label Studio's Local Files path, its file name
        for any other."""
        if found is not None and found in self._names:
            return self._names[found]
        parts = reference_parts(reference)
        if not parts:
            return reference
        plain = "/".join(parts) == reference.replace("\\", "/").removeprefix("./")
        return "/".join(parts) if plain or "?d=" in reference else parts[-1]

    def check(self, path: Path, missing: Sequence[tuple[str, str]]) -> None:
        """Raise for the photos of ``path`` not found: (entry, reference) pairs.

        Raises:
            LabelFormatError: naming each reference (five at most) and what was looked for.
        """
        if not missing:
            return
        shown = "; ".join(f"{e} {r!r} ({self.looked_for(r)})" for e, r in missing[:5])
        more = f"; and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise LabelFormatError(
            f"{path}: {len(missing)} labelled photo(s) not found: {shown}{more} (pass the folder "
            "that holds them)"
        )

    def _one(self, hits: dict[Path, str], reference: str, where: str) -> Path:
        """The one photo of ``hits`` (path: name under its root); two or more fit
        ``reference``: an error naming them."""
        if len(hits) > 1:
            shown = " and ".join(str(h) for h in hits)
            raise LabelFormatError(
                f"{where}: expected one photo for {reference!r}, got {len(hits)} that fit "
                f"it: {shown} (rename or move one, or pass the folder that holds the right one)"
            )
        ((found, name),) = hits.items()
        self._names[found] = name
        return found

    def _index(self) -> dict[str, list[tuple[Path, str]]]:
        """Every photo under the roots by file name: (path, name under its root)."""
        if self._by_name is None:
            self._by_name = {}
            for root in self.roots:
                if root.is_dir():
                    for photo in find_photos(root):
                        entry = (photo, photo.relative_to(root).as_posix())
                        self._by_name.setdefault(photo.name, []).append(entry)
        return self._by_name
