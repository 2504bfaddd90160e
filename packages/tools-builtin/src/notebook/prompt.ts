/**
 * What the model reads about NotebookEdit: Claude Code's wording, with cells addressed by `cell_id`.
 */
export const DESCRIPTION = "Replace the contents of a specific cell in a Jupyter notebook."

export const PROMPT = `Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with new source. Jupyter notebooks are interactive documents that combine code, text, and visualizations, commonly used for data analysis and scientific computing. The notebook_path parameter must be an absolute path, not a relative path. The cell_id identifies the cell: the cell's id, or cell-N (0-indexed) for notebooks whose cells have no ids. Use edit_mode=insert to add a new cell after the cell with cell_id (at the beginning if cell_id is not given). Use edit_mode=delete to delete the cell with cell_id. You must read the notebook with the Read tool before editing it.`
