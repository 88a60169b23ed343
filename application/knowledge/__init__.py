"""Knowledge bases: datasets, their documents, and retrieval over them."""

from application.knowledge.add_document import AddDocument
from application.knowledge.create_dataset import CreateDataset
from application.knowledge.describe_dataset import DescribeDataset
from application.knowledge.retrieval import Retrieval

__all__ = ["AddDocument", "CreateDataset", "DescribeDataset", "Retrieval"]
