# One image for every Ouroboros service of compose.yaml (api, flower, beat, one worker per queue): the package
# and its locked dependencies are installed when the image is built, never when a container starts, and every
# process runs as the unprivileged user "ouro".
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    OURO_STATE=/state

# git: the forge adapter and the merge train run it; bubblewrap: the fixers' sandbox.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . .
RUN pip install -c requirements.lock . \
    && useradd --system --uid 10001 --home-dir /state --shell /usr/sbin/nologin ouro \
    && mkdir -p /state \
    && chown ouro:ouro /state

USER ouro
WORKDIR /state
CMD ["ouro", "--help"]
