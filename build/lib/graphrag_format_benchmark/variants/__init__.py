"""Graph variants: what a prompt shows besides the input graph as given.

contexts     the graph a question's prompt shows: shared, given by the questions file, or cut around its start (khop)
names        new names and ids in the style of the input's (the namer that distractors and pseudonyms draw from)
distractors  sizes medium and large: seeded branches of new nodes that leave every answer alone
ids          short ids (n1, n2, ...) and stable edge ids (e1, e2, ...)
pseudonyms   every entity renamed to a made-up name in its own style, one per entity for the run
"""
