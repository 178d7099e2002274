"""Where each move went wrong: analysers that judge every decision of a recorded match, and the
luck of its chance, and write their judgement beside the record as annotations."""
