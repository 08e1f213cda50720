"""One of every input-item shape the SDK's runner stores in a session (as plain dicts)."""

from __future__ import annotations

from typing import Any

PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

EVERY_SHAPE: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "developer", "content": "Answer in French."},
    {"role": "user", "content": "plain text"},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is in this picture?"},
            {"type": "input_image", "image_url": PNG, "detail": "auto"},
            {"type": "input_file", "file_id": "file-123", "filename": "notes.pdf"},
        ],
    },
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "A cat.", "annotations": [], "logprobs": []}],
    },
    {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "The user wants the weather."}],
        "encrypted_content": "gAAAAB-opaque",
    },
    {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Lisbon", "units": "metric"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "22 °C, sunny"},
    {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": [
            {"type": "input_text", "text": "structured"},
            {"type": "input_image", "image_url": PNG},
        ],
    },
    {
        "id": "fs_1",
        "type": "file_search_call",
        "queries": ["refund policy"],
        "status": "completed",
        "results": [
            {"file_id": "file-9", "filename": "policy.md", "score": 0.87, "text": "30 days"}
        ],
    },
    {
        "id": "cu_1",
        "type": "computer_call",
        "call_id": "call_3",
        "action": {"type": "click", "x": 10, "y": 20, "button": "left"},
        "pending_safety_checks": [],
        "status": "completed",
    },
    {
        "type": "computer_call_output",
        "call_id": "call_3",
        "output": {"type": "computer_screenshot", "image_url": PNG},
    },
    {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "mnemosyne"},
    },
    {
        "id": "ig_1",
        "type": "image_generation_call",
        "status": "completed",
        "result": "iVBORw0KGgo=",
    },
    {
        "id": "ci_1",
        "type": "code_interpreter_call",
        "code": "print(1 + 1)",
        "container_id": "cntr_1",
        "outputs": [{"type": "logs", "logs": "2\n"}],
        "status": "completed",
    },
    {
        "id": "ls_1",
        "type": "local_shell_call",
        "call_id": "call_4",
        "action": {"type": "exec", "command": ["ls", "-la"], "env": {}},
        "status": "completed",
    },
    {"type": "local_shell_call_output", "id": "call_4", "output": "total 0"},
    {
        "id": "mcp_1",
        "type": "mcp_call",
        "server_label": "docs",
        "name": "search",
        "arguments": "{}",
        "output": "found",
    },
    {"type": "item_reference", "id": "msg_0"},
    {
        "role": "user",
        "content": "numbers",
        "n": [0, -1, 1.5, 1e300, 12345678901234567890, True, None],
    },
]
