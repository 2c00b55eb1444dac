#!/usr/bin/env bash
# SAM CLI checks against the CDK-synthesized template (offline, no Docker needed).
#
#   bash scripts/sam_check.sh            # synth, then `sam validate --lint` and `sam build`
#   SKIP_SYNTH=1 bash scripts/sam_check.sh
#   bash scripts/sam_check.sh --events   # (re)generate tests/unit/handlers/jobs_api/events/*.json only
#
# SAM CLI pins its own boto3/botocore, so it lives in a separate venv (.venv-sam, not
# committed). Runs from the repo root so cfn-lint picks up .cfnlintrc.yaml. `sam build` is a
# pass-through for CDK's pre-bundled assets (aws:asset:is-bundled). `sam local invoke` /
# `start-api` need a container runtime (Docker or Finch) and are not run here.
set -euo pipefail
cd "$(dirname "$0")/.."

SAM_VENV=${SAM_VENV:-.venv-sam}
SAM_VERSION=${SAM_VERSION:-1.170.0}
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export SAM_CLI_TELEMETRY=0

if [ ! -x "$SAM_VENV/bin/sam" ]; then
  echo "== creating $SAM_VENV with aws-sam-cli==$SAM_VERSION"
  python3 -m venv "$SAM_VENV"
  "$SAM_VENV/bin/pip" install -q --upgrade pip
  "$SAM_VENV/bin/pip" install -q "aws-sam-cli==$SAM_VERSION"
fi
SAM="$SAM_VENV/bin/sam"
"$SAM" --version

if [ "${1:-}" = "--events" ]; then
  # API Gateway REST proxy events for the api Lambda (stage v1, as deployed). SAM fills in
  # pathParameters={"proxy": ...} and a base64 body; the resolver routes on `path`.
  out=tests/unit/handlers/jobs_api/events
  mkdir -p "$out"
  gen() {  # gen FILE METHOD PATH RESOURCE BODY
    AWS_DEFAULT_REGION=us-east-1 "$SAM" local generate-event apigateway aws-proxy \
      --stage v1 --method "$2" --path "$3" --resource "$4" --body "$5" > "$out/$1"
    echo "wrote $out/$1"
  }
  job=0f1e2d3c4b5a69788796a5b4c3d2e1f0
  gen post_jobs.json POST jobs /jobs '{"prompt":"Process orders 1, 2 and 3"}'
  gen post_jobs_with_ids.json POST jobs /jobs \
    '{"prompt":"Process order 7","session_id":"customer-42","agent_id":"fulfilment"}'
  gen get_job.json GET "jobs/$job" '/jobs/{job_id}' ''
  gen post_job_responses.json POST "jobs/$job/responses" '/jobs/{job_id}/responses' \
    '{"responses":[{"interruptId":"interrupt-0123456789abcdef01234567","response":{"approved":true}}]}'
  gen get_session.json GET sessions/customer-42 '/sessions/{session_id}' ''
  exit 0
fi

if [ -z "${SKIP_SYNTH:-}" ]; then
  echo "== cdk synth"
  PATH="$PWD/.venv/bin:$PATH" npx cdk synth -q
fi

shopt -s nullglob
templates=(cdk.out/*.template.json)
if [ ${#templates[@]} -eq 0 ]; then
  echo "no cdk.out/*.template.json: run the synth first" >&2
  exit 1
fi

# sam needs a region even offline (validate/lint resolve region-specific specs).
export AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1}
status=0
for template in "${templates[@]}"; do
  stack=$(basename "$template" .template.json)
  echo "== sam validate --lint -t $template"
  "$SAM" validate --lint -t "$template" || status=1
  echo "== sam build -t $template"
  # The template's Code.S3Key points at cdk.out/asset.<hash>/ via aws:asset:path metadata;
  # SAM resolves it from the template's directory and copies it into .aws-sam/build.
  "$SAM" build -t "$template" --build-dir ".aws-sam/build-$stack" || status=1
done
exit $status
