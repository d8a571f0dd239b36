public enum TasksPlaceholder {}
