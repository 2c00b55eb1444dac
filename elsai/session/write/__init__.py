"""The write path: one live agent's durability (binding, lease, pending bookmark, segments).

Only the session manager builds a binding; readers (elsai.session.read, elsai.session.inspect)
never depend on this package.
"""
