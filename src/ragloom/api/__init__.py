"""The HTTP service (`ragloom serve`, extra `api`): FastAPI routes, GraphQL, SSE and a chat page."""

from __future__ import annotations
