"""Names of the testers' options: light enough for the CLI to offer without loading the testers."""

CLASSIFIERS = ("logistic", "mlp")  # the attack's classifiers (hybrid.testers.sniper)
TRANSFORMS = ("auto", "flags", "onehot", "joint", "identity")  # its feature transforms (hybrid.testers.transforms)
