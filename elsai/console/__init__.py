"""`elsai console`: a local web page that shows what durable agents did, and answers or cancels jobs.

Standard library only (http.server, html): nothing to install beyond elsai, nothing fetched at
run time, and nothing of it is imported by `import elsai`. Pages are rendered and escaped on the
server; one small script (static/console.js) refreshes a running job's parts in place.
"""
