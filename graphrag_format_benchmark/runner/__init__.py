"""The runner: Chat Completions against any OpenAI-compatible endpoint, into an append-only log.

config      the model and its sampling (ModelConfig), the key kept out of everything written (Redactor)
transport   one POST over httpx2: a deadline per attempt, the body cap, no redirects, kept-alive connections
pacing      retries' backoff and the provider's rate limits (Bucket, Pacer)
endpoint    what the answers say of the endpoint (Endpoint): fail fast, throttle on timeouts, stop when it goes away
send        one request with bounded retries, as the log records it; the control solver as a model
log         requests.jsonl, fsynced line by line, read back a line at a time
jobs        which prompts are sent in which order (Schedule), by which workers (Sender), counted (Tally)
batch       the OpenAI Batch API: request files (--export-batch) and a whole run through it (--batch)

Every request is one line of requests.jsonl, on disk before its worker takes the next job. A re-run of the same
command skips what the log holds (same prompt, model, sampling and repeat), so a killed run costs nothing twice.
"""
