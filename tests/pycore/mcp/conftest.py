"""Inside Pyodide only the pure tests run: the others start servers (sockets, subprocesses, uvicorn)."""

import sys

collect_ignore = []
if sys.platform == "emscripten":
    collect_ignore = ["test_sdk_server.py", "test_client_requests.py", "test_traffic.py", "test_server_everything.py",
                      "test_conformance.py", "test_cli.py", "test_server_restart.py",
                      "test_client_cases.py", "conformance_client.py", "sdk_server.py", "scripted_server.py",
                      "mcp_servers.py", "oauth_server.py", "cors_apps.py", "test_oauth.py", "test_oauth_methods.py",
                      "test_doctor.py", "test_doctor_chromium.py", "test_oauth_cases.py",
                      "test_oauth_popup.py"]
