"""Knowledge bases: datasets of documents cut into chunks for retrieval."""
