# The action's image. Only the FROM line names the base; every package comes from requirements.lock (pyproject.toml's
# pins with all their dependencies, each with its hashes) in a layer that changes only when the lock does, so a code
# change rebuilds in seconds and no dependency floats.
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONPATH=/app

COPY requirements.lock /tmp/requirements.lock
RUN pip install --require-hashes -r /tmp/requirements.lock \
 && rm -rf /tmp/requirements.lock /root/.cache

COPY agentci_action /app/agentci_action
COPY entrypoint.py /app/entrypoint.py
RUN python -m compileall -q /app

ENTRYPOINT ["python", "/app/entrypoint.py"]
