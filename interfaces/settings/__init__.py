"""Settings from the environment (MEMAGENT_*): the model, its checks, its errors and its source."""
