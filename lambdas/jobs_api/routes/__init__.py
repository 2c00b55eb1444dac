"""One Powertools `Router` per resource of the jobs API; `jobs_api.app` includes them."""
