"""Fetch a web page for ingestion: redirects, read time-outs and an overall deadline, size cap."""

from __future__ import annotations

import contextlib
import socket
import threading
from email.utils import parsedate_to_datetime
from pathlib import PurePosixPath
from typing import Any

import httpx

from ragloom.errors import LoadError
from ragloom.ingestion.loaders.formats import (
    MEDIA_TYPES,
    SUFFIX_OF_MEDIA,
    SUPPORTED_SUFFIXES,
    supported_hint,
)
from ragloom.ingestion.loaders.sources import RawSource, SourceRef, oversized
from ragloom.settings import IngestSettings
from ragloom.state import content_hash

MAX_REDIRECTS = 5


def _url_suffix(url: str, content_type: str) -> str:
    """Format of a web resource: its Content-Type first, the URL's extension second, else HTML."""
    media = content_type.split(";")[0].strip().lower()
    if media in SUFFIX_OF_MEDIA:
        return SUFFIX_OF_MEDIA[media]
    url_suffix = PurePosixPath(httpx.URL(url).path).suffix.lower()
    if url_suffix in SUPPORTED_SUFFIXES:
        return url_suffix
    if not media:
        return ".html"
    raise LoadError(f"unsupported content type {media!r}", where=url, hint=supported_hint())


def _http_modified(headers: httpx.Headers) -> str | None:
    value = headers.get("last-modified")
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError):
        return None


class _Deadline:
    """Shuts the sockets of one fetch down when its overall deadline passes, waking any read.

    httpx bounds each read, not the whole exchange: a server that drips a byte now and then never
    trips the read time-out. The sockets are learned from httpx's trace hook as they connect.
    """

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """Trace hook for httpx: remember each socket as it connects."""
        if not event.endswith("connect_tcp.complete"):
            return
        sock = info["return_value"].get_extra_info("socket")
        with self._lock:
            self._sockets.append(sock)
            if self.fired:
                _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _stream_body(response: httpx.Response, url: str, limit: int) -> bytes:
    """Read at most limit bytes; one more means the body is oversized."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise oversized(url, int(declared), limit)
    body = bytearray()
    for piece in response.iter_bytes():
        body.extend(piece)
        if len(body) > limit:
            raise oversized(url, len(body), limit)
    return bytes(body)


def _fetch(url: str, settings: IngestSettings, deadline: _Deadline) -> tuple[httpx.Response, bytes]:
    timeout = httpx.Timeout(settings.http_timeout_s)
    with (
        httpx.Client(timeout=timeout, follow_redirects=True, max_redirects=MAX_REDIRECTS) as client,
        client.stream("GET", url, extensions={"trace": deadline.trace}) as response,
    ):
        if not response.is_success:
            raise LoadError(
                f"HTTP {response.status_code} {response.reason_phrase}".rstrip(), where=url
            )
        return response, _stream_body(response, url, settings.max_bytes)


def _limits(settings: IngestSettings) -> str:
    return (
        f"each read may wait {settings.http_timeout_s:g} s (ingest.http_timeout_s), the whole "
        f"fetch may take {settings.http_deadline_s:g} s (ingest.http_deadline_s)"
    )


def _past_deadline(url: str, settings: IngestSettings) -> LoadError:
    return LoadError(
        f"not received within the deadline of {settings.http_deadline_s:g} s; " + _limits(settings),
        where=url,
        hint="raise ingest.http_deadline_s for a slow server, or try again later",
    )


def _http_error(exc: httpx.HTTPError | httpx.InvalidURL, url: str, settings: IngestSettings) -> LoadError:
    if isinstance(exc, httpx.TimeoutException):
        return LoadError(
            f"timed out after {settings.http_timeout_s:g} s without data ({type(exc).__name__}); "
            + _limits(settings),
            where=url,
            hint="raise ingest.http_timeout_s or try again later",
        )
    if isinstance(exc, httpx.TooManyRedirects):
        return LoadError(f"more than {MAX_REDIRECTS} redirects", where=url)
    return LoadError(f"connection failed: {exc}", where=url)


def read_url(ref: SourceRef, settings: IngestSettings) -> RawSource:
    """Fetch a web page within the time limits; an oversized body is rejected while reading."""
    url = ref.source_id
    deadline = _Deadline(settings.http_deadline_s)
    try:
        with deadline:
            response, data = _fetch(url, settings, deadline)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        if deadline.fired:
            raise _past_deadline(url, settings) from exc
        raise _http_error(exc, url, settings) from exc
    if deadline.fired:  # a body without a length ends cleanly when its socket is shut
        raise _past_deadline(url, settings)
    suffix = _url_suffix(url, response.headers.get("content-type", ""))
    return RawSource(
        ref=ref,
        data=data,
        content_hash=content_hash(data),
        suffix=suffix,
        media_type=MEDIA_TYPES[suffix],
        modified=_http_modified(response.headers),
    )
