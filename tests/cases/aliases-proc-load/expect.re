^loaded$
