"""A webhook receiver for the service's alerts, standard library only (README, "Alerts").

Verifies each delivery as Standard Webhooks 1.0 defines it: the base64 HMAC-SHA256, under the
endpoint's secret, of "<webhook-id>.<webhook-timestamp>.<body>", against each "v1,<signature>" in
webhook-signature (two during a secret rotation), and refuses timestamps more than 5 minutes off.

    WEBHOOK_SECRET=whsec_... python3 examples/webhook_receiver.py [port]
"""
import base64, hashlib, hmac, json, os, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRET = base64.b64decode(os.environ["WEBHOOK_SECRET"].removeprefix("whsec_"))

def verify(headers, body: bytes) -> dict:
    msg_id, ts = headers["webhook-id"], headers["webhook-timestamp"]
    if abs(time.time() - int(ts)) > 300:
        raise ValueError("stale timestamp")
    signed = f"{msg_id}.{ts}.".encode() + body
    expected = base64.b64encode(hmac.new(SECRET, signed, hashlib.sha256).digest()).decode()
    if not any(hmac.compare_digest(expected, s.removeprefix("v1,")) for s in headers["webhook-signature"].split()):
        raise ValueError("bad signature")
    return json.loads(body)

class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        try:
            event = verify(self.headers, body)
        except (KeyError, ValueError) as error:
            print("refused:", error, flush=True)
            self.send_response(400)
            self.end_headers()
            return
        print(event["type"], event["id"], event["data"].get("post", {}).get("caption", ""), flush=True)
        self.send_response(204)
        self.end_headers()

if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 9911
    server = HTTPServer(("127.0.0.1", port), Hook)  # bound before it says so
    print(f"listening on http://127.0.0.1:{server.server_port}/hooks", flush=True)
    server.serve_forever()
