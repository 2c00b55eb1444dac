"""Cold-start check that the botocore in use can make the S3 writes elsai's checkpoints rely on.

S3 session storage writes with ``PutObject(IfNoneMatch="*")`` (create) and
``PutObject(IfMatch=etag)`` (replace). botocore validates parameters against its bundled S3
model, so an older botocore refuses them client-side (``Unknown parameter in input: "IfMatch"``)
on the first checkpoint replace, after the job has already done work. The Lambda bundle ships a
pinned botocore for that reason; this check catches a bundle that had it stripped (on purpose
or by accident) at init, with a message that says what to do, instead of mid-job.
"""

from __future__ import annotations

from pathlib import Path

#: The first botocore whose S3 model has both parameters (IfNoneMatch came in 1.35.2).
MIN_BOTOCORE = "1.35.69"
REQUIRED_PUT_OBJECT_PARAMETERS = ("IfMatch", "IfNoneMatch")


class BotocoreTooOldError(RuntimeError):
    """The loaded botocore cannot send S3 conditional writes; checkpoints would fail."""


def missing_put_object_parameters() -> list[str]:
    """Which of the conditional-write parameters the loaded S3 service model lacks."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("s3")
    shape = model.operation_model("PutObject").input_shape
    members = shape.members if shape is not None else {}
    return [p for p in REQUIRED_PUT_OBJECT_PARAMETERS if p not in members]


def require_s3_conditional_writes() -> str:
    """Raise ``BotocoreTooOldError`` unless PutObject takes IfMatch and IfNoneMatch.

    Returns the botocore version found. Reads the service model botocore will really use
    (not the version number), so a patched or backported botocore is judged by what it can do.
    """
    import botocore

    missing = missing_put_object_parameters()
    if missing:
        from elsai.serverless.contract import LAMBDA_LOCK  # only to word the error

        where = Path(botocore.__file__).resolve().parent
        raise BotocoreTooOldError(
            f"botocore {botocore.__version__} (loaded from {where}) has no S3 PutObject "
            f"parameter {' or '.join(missing)}: elsai's S3 session storage needs conditional "
            f"writes, which botocore has from {MIN_BOTOCORE}. Ship boto3>={MIN_BOTOCORE} and "
            f"botocore>={MIN_BOTOCORE} in the function bundle (elsai's bundling installs the "
            f"pinned versions from {LAMBDA_LOCK}; `python -m elsai.cdk.lock path` prints where "
            "it is) instead of relying on the boto3 of the Lambda runtime."
        )
    return str(botocore.__version__)
