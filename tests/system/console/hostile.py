"""What the hostile tool returns: each part would run script if it were ever treated as HTML."""

HOSTILE = (
    '<img src=x onerror="window.__xss=1;alert(1)">'
    "<script>window.__xss=2;alert(2)</script>"
    '<a href="javascript:window.__xss=3">x</a>'
)
