# The action's image. Only the FROM line names the base; dependencies come from pyproject.toml's exact pins
# in a layer that changes only when pyproject.toml does, so a code change rebuilds in seconds.
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONPATH=/app

COPY pyproject.toml /app/pyproject.toml
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('/app/pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt \
 && rm -rf /tmp/requirements.txt /root/.cache

COPY agentci_action /app/agentci_action
COPY entrypoint.py /app/entrypoint.py
RUN python -m compileall -q /app

ENTRYPOINT ["python", "/app/entrypoint.py"]
